/// The web UI's script: a hash-routed page over the storage API (`#/` buckets,
/// `#/b/BUCKET?prefix=P` a folder, `#/o/BUCKET/NAME` an object), with live updates from the long
/// poll `/ui/api/changes`. No framework and no build step; DOM built from text nodes only.
enum WebUIScript {
  static let source = #"""
    "use strict";
    const WRITABLE = ["contentType", "cacheControl", "contentDisposition", "contentEncoding", "contentLanguage", "customTime"];
    const PAGE_SIZE = 50;
    const $ = (id) => document.getElementById(id);
    const enc = encodeURIComponent;
    let view = null;        // what is shown: {kind, bucket, prefix, name, ...}
    let renderSeq = 0;

    function el(tag, attrs, ...children) {
      const node = document.createElement(tag);
      for (const [key, value] of Object.entries(attrs || {})) {
        if (key === "onclick" || key === "onchange" || key === "oninput") node[key] = value;
        else if (value !== undefined && value !== null && value !== false) node.setAttribute(key, value === true ? "" : value);
      }
      for (const child of children.flat()) {
        if (child === null || child === undefined) continue;
        node.append(child instanceof Node ? child : document.createTextNode(String(child)));
      }
      return node;
    }

    function toast(message, error) {
      const box = $("toast");
      box.textContent = message;
      box.className = error ? "error" : "";
      box.hidden = false;
      clearTimeout(toast.timer);
      toast.timer = setTimeout(() => { box.hidden = true; }, error ? 6000 : 2500);
    }

    async function api(method, url, body, headers) {
      const response = await fetch(url, { method, body, headers: headers || {} });
      const text = await response.text();
      let json = null;
      try { json = text ? JSON.parse(text) : null; } catch (e) { json = null; }
      if (!response.ok) {
        const message = (json && json.error && json.error.message) || `${response.status} ${response.statusText}`;
        throw new Error(message);
      }
      return json;
    }

    function patchObject(bucket, name, body) {
      return api("PATCH", `/storage/v1/b/${enc(bucket)}/o/${enc(name)}`, JSON.stringify(body), { "Content-Type": "application/json" });
    }

    function formatSize(value) {
      const n = Number(value);
      if (n < 1024) return `${n} B`;
      const units = ["KiB", "MiB", "GiB", "TiB"];
      let v = n / 1024, u = 0;
      while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
      return `${v.toFixed(1)} ${units[u]}`;
    }

    function crumbs(parts) {
      const nav = $("crumbs");
      nav.replaceChildren();
      parts.forEach(([label, href], i) => {
        if (i > 0) nav.append(" / ");
        nav.append(href ? el("a", { href }, label) : label);
      });
    }

    function parseHash() {
      const raw = location.hash.replace(/^#/, "") || "/";
      const [path, query] = raw.split("?");
      const params = new URLSearchParams(query || "");
      const parts = path.split("/").filter((p) => p !== "");
      if (parts[0] === "b" && parts[1]) return { kind: "folder", bucket: decodeURIComponent(parts[1]), prefix: params.get("prefix") || "", tokens: [] };
      if (parts[0] === "o" && parts[1] && parts[2]) return { kind: "object", bucket: decodeURIComponent(parts[1]), name: decodeURIComponent(parts.slice(2).join("/")) };
      return { kind: "buckets" };
    }

    function folderHref(bucket, prefix) { return `#/b/${enc(bucket)}` + (prefix ? `?prefix=${enc(prefix)}` : ""); }
    function objectHref(bucket, name) { return `#/o/${enc(bucket)}/${enc(name)}`; }

    async function render(options) {
      const seq = ++renderSeq;
      const main = $("main");
      try {
        let content;
        if (view.kind === "buckets") content = await renderBuckets();
        else if (view.kind === "folder") content = await renderFolder();
        else content = await renderObject();
        if (seq !== renderSeq) return;
        main.replaceChildren(content);
        if (options && options.flash) main.classList.add("flash"), setTimeout(() => main.classList.remove("flash"), 1300);
      } catch (error) {
        if (seq !== renderSeq) return;
        main.replaceChildren(el("p", { id: "error", class: "muted" }, error.message));
      }
    }

    // MARK: Buckets

    async function renderBuckets() {
      crumbs([["buckets"]]);
      const list = await api("GET", "/storage/v1/b");
      const rows = (list.items || []).map((b) => el("tr", {}, el("td", {}, el("a", { href: folderHref(b.name, ""), class: "bucket-link" }, b.name)), el("td", {}, b.timeCreated || "")));
      const input = el("input", { type: "text", id: "new-bucket", placeholder: "new-bucket-name" });
      const create = el("button", { id: "create-bucket", onclick: async () => {
        try { await api("POST", "/storage/v1/b", JSON.stringify({ name: input.value.trim() }), { "Content-Type": "application/json" }); toast("Bucket created"); render(); }
        catch (error) { toast(error.message, true); }
      } }, "Create bucket");
      return el("div", {}, el("h1", {}, "Buckets"),
        rows.length ? el("table", { id: "buckets" }, el("tr", {}, el("th", {}, "Name"), el("th", {}, "Created")), rows)
          : el("p", { class: "muted", id: "no-buckets" }, "No buckets yet: upload with any client, or create one."),
        el("div", { class: "toolbar" }, el("div", { class: "narrow" }, input), create));
    }

    // MARK: Folder

    async function renderFolder() {
      const { bucket, prefix } = view;
      const parts = [["buckets", "#/"], [bucket, folderHref(bucket, "")]];
      let acc = "";
      for (const piece of prefix.split("/").filter((p) => p)) { acc += piece + "/"; parts.push([piece, folderHref(bucket, acc)]); }
      crumbs(parts);
      const token = view.tokens[view.tokens.length - 1];
      let url = `/storage/v1/b/${enc(bucket)}/o?delimiter=%2F&maxResults=${PAGE_SIZE}&prefix=${enc(prefix)}`;
      if (token) url += `&pageToken=${enc(token)}`;
      const page = await api("GET", url);
      view.next = page.nextPageToken || null;
      const rows = [];
      for (const p of page.prefixes || []) {
        rows.push(el("tr", { class: "folder" }, el("td", {}, "📁 ", el("a", { href: folderHref(bucket, p) }, p.slice(prefix.length))), el("td"), el("td"), el("td")));
      }
      for (const o of page.items || []) {
        rows.push(el("tr", { class: "object", "data-name": o.name },
          el("td", {}, el("a", { href: objectHref(bucket, o.name), class: "object-link" }, o.name.slice(prefix.length))),
          el("td", { class: "num" }, formatSize(o.size)), el("td", {}, o.contentType || ""), el("td", {}, o.updated)));
      }
      const input = el("input", { type: "file", id: "file-input", multiple: true, onchange: () => upload(Array.from(input.files)) });
      const zone = el("div", { id: "drop-zone" }, "Drop files here to upload them into ", el("b", {}, `${bucket}/${prefix}`), " — or ", input);
      zone.addEventListener("dragover", (e) => { e.preventDefault(); zone.classList.add("over"); });
      zone.addEventListener("dragleave", () => zone.classList.remove("over"));
      zone.addEventListener("drop", (e) => { e.preventDefault(); zone.classList.remove("over"); upload(Array.from(e.dataTransfer.files)); });
      const previous = el("button", { id: "prev-page", disabled: view.tokens.length === 0, onclick: () => { view.tokens.pop(); render(); } }, "← Previous");
      const next = el("button", { id: "next-page", disabled: !view.next, onclick: () => { view.tokens.push(view.next); render(); } }, "Next →");
      return el("div", {}, el("h1", {}, `${bucket}/${prefix}`), zone,
        rows.length ? el("table", { id: "listing" }, el("tr", {}, el("th", {}, "Name"), el("th", {}, "Size"), el("th", {}, "Type"), el("th", {}, "Updated")), rows)
          : el("p", { class: "muted", id: "empty-folder" }, "Nothing here."),
        el("div", { class: "toolbar" }, previous, el("span", { id: "page-number", class: "muted" }, `page ${view.tokens.length + 1}`), next));
    }

    async function upload(files) {
      const { bucket, prefix } = view;
      for (const file of files) {
        try {
          await api("POST", `/upload/storage/v1/b/${enc(bucket)}/o?uploadType=media&name=${enc(prefix + file.name)}`, file,
            { "Content-Type": file.type || "application/octet-stream" });
          toast(`Uploaded ${file.name}`);
        } catch (error) { toast(`${file.name}: ${error.message}`, true); }
      }
      render();
    }

    // MARK: Object

    async function renderObject() {
      const { bucket, name } = view;
      const slash = name.lastIndexOf("/");
      crumbs([["buckets", "#/"], [bucket, folderHref(bucket, "")], [name.slice(0, slash + 1) || "/", folderHref(bucket, name.slice(0, slash + 1))], [name.slice(slash + 1)]]);
      const both = await api("GET", `/ui/api/object?bucket=${enc(bucket)}&name=${enc(name)}`);
      const gcs = both.gcs;
      view.dirty = false;
      const inputs = {};
      const editRows = WRITABLE.map((field) => {
        inputs[field] = el("input", { type: "text", id: `field-${field}`, value: gcs[field] || "", oninput: () => { view.dirty = true; } });
        const remove = gcs[field] !== undefined
          ? el("button", { class: "small danger", id: `remove-${field}`, title: `PATCH {"${field}": null}`, onclick: () => save({ [field]: null }) }, "null")
          : null;
        return el("tr", {}, el("td", { class: "key" }, field), el("td", {}, inputs[field]), el("td", {}, remove));
      });
      const custom = gcs.metadata || {};
      const customRows = Object.keys(custom).sort().map((key) => {
        inputs[`meta:${key}`] = el("input", { type: "text", id: `meta-${key}`, value: custom[key], oninput: () => { view.dirty = true; } });
        return el("tr", {}, el("td", { class: "key" }, key), el("td", {}, inputs[`meta:${key}`]),
          el("td", {}, el("button", { class: "small danger", id: `remove-meta-${key}`, onclick: () => save({ metadata: { [key]: null } }) }, "null")));
      });
      const newKey = el("input", { type: "text", id: "new-meta-key", placeholder: "new key", oninput: () => { view.dirty = true; } });
      const newValue = el("input", { type: "text", id: "new-meta-value", placeholder: "value", oninput: () => { view.dirty = true; } });
      const saveButton = el("button", { class: "primary", id: "save", onclick: () => {
        const body = {};
        for (const field of WRITABLE) {
          const value = inputs[field].value;
          if (value !== (gcs[field] || "")) body[field] = value === "" ? null : value;
        }
        const metadata = {};
        for (const key of Object.keys(custom)) if (inputs[`meta:${key}`].value !== custom[key]) metadata[key] = inputs[`meta:${key}`].value;
        if (newKey.value.trim()) metadata[newKey.value.trim()] = newValue.value;
        if (Object.keys(metadata).length) body.metadata = metadata;
        save(body);
      } }, "Save (PATCH)");
      const download = el("a", { class: "button", id: "download", href: `/download/storage/v1/b/${enc(bucket)}/o/${enc(name)}?alt=media`, download: name.slice(slash + 1) }, "Download");
      const remove = el("button", { class: "danger", id: "delete", onclick: async () => {
        if (!confirm(`Delete ${bucket}/${name}?`)) return;
        try { await api("DELETE", `/storage/v1/b/${enc(bucket)}/o/${enc(name)}`); toast("Deleted"); location.hash = folderHref(bucket, name.slice(0, slash + 1)); }
        catch (error) { toast(error.message, true); }
      } }, "Delete");
      return el("div", {},
        el("h1", { id: "object-name" }, name),
        el("div", { class: "toolbar" },
          el("span", { class: "badge" }, "generation ", el("span", { id: "generation" }, gcs.generation)),
          el("span", { class: "badge" }, "metageneration ", el("span", { id: "metageneration" }, gcs.metageneration)),
          el("span", { class: "muted" }, formatSize(gcs.size)), el("span", { class: "spacer" }), download, remove),
        el("h2", {}, "Writable metadata"),
        el("table", { class: "edit" }, editRows),
        el("h2", {}, "Custom metadata"),
        el("table", { class: "edit", id: "custom-metadata" }, customRows,
          el("tr", {}, el("td", { class: "key" }, newKey), el("td", {}, newValue), el("td"))),
        el("div", { class: "toolbar" }, saveButton, el("span", { class: "muted" }, "Sends only what changed; \"null\" deletes a field.")),
        el("div", { class: "columns" },
          el("div", {}, el("h2", {}, "GCS JSON API (/storage/v1)"), flavourTable("gcs-table", gcs)),
          el("div", {}, el("h2", {}, "Firebase (/v0)"), flavourTable("firebase-table", both.firebase))));
    }

    function flavourTable(id, resource) {
      return el("table", { id }, Object.keys(resource).map((key) => {
        const value = resource[key];
        const text = typeof value === "object" ? JSON.stringify(value) : String(value);
        return el("tr", { "data-key": key }, el("td", { class: "key" }, key), el("td", { class: "value" }, text));
      }));
    }

    async function save(body) {
      try {
        const updated = await patchObject(view.bucket, view.name, body);
        toast(`Saved: metageneration ${updated.metageneration}`);
        view.dirty = false;
        await render({ flash: true });
      } catch (error) { toast(error.message, true); }
    }

    // MARK: Live updates

    function relevant(change) {
      if (view.kind === "buckets") return true;
      if (change.bucket !== view.bucket) return false;
      if (view.kind === "folder") return change.name.startsWith(view.prefix);
      return change.name === view.name;
    }

    async function listen() {
      let since = -1;
      for (;;) {
        try {
          const answer = await api("GET", `/ui/api/changes?since=${since}`);
          $("live").className = "";
          const hits = answer.changes.filter(relevant);
          since = answer.seq;
          if (answer.reload || hits.length) onChanges(hits);
        } catch (error) {
          $("live").className = "off";
          await new Promise((resolve) => setTimeout(resolve, 2000));
        }
      }
    }

    function onChanges(hits) {
      if (view.kind === "object" && hits.some((c) => c.kind === "deleted")) {
        $("banner").textContent = `${view.bucket}/${view.name} was deleted by another client.`;
        $("banner").hidden = false;
        $("main").replaceChildren(el("p", { id: "deleted", class: "muted" }, "This object no longer exists."));
        return;
      }
      if (view.kind === "object" && view.dirty) {
        $("banner").textContent = "This object was changed by another client; saving sends only your changes.";
        $("banner").hidden = false;
        return;
      }
      render({ flash: true });
    }

    function route() {
      $("banner").hidden = true;
      view = parseHash();
      render();
    }

    window.addEventListener("hashchange", route);
    route();
    listen();
    """#
}

// The web app's flows through the SDK replica: each step records {step, ok, detail}; the Python
// driver reads window.__results once window.__done is set.
'use strict';

(async () => {
  const params = new URLSearchParams(location.search);
  const port = params.get('emu');
  const bucket = params.get('bucket');
  const storage = new StorageReplica({ host: '127.0.0.1', port, bucket, appId: '1:1234:web:abcd', authToken: 'owner' });
  document.getElementById('origin').textContent = location.origin;
  document.getElementById('emulator').textContent = storage.origin;
  const results = [];
  window.__results = results;

  function record(step, ok, detail) {
    results.push({ step, ok, detail });
    const li = document.createElement('li');
    li.className = ok ? 'pass' : 'fail';
    li.textContent = `${step}: ${detail}`;
    document.getElementById('results').appendChild(li);
  }

  // Runs one step; a thrown error or a false check fails it with the message.
  async function step(name, body) {
    try {
      const detail = await body();
      record(name, true, detail || 'ok');
    } catch (error) {
      record(name, false, String(error && error.message || error));
    }
  }

  function check(condition, message) { if (!condition) throw new Error(message); }
  function json(xhr) { return JSON.parse(xhr.responseText); }
  function expectStatus(xhr, wanted) {
    const text = xhr.responseType === '' || xhr.responseType === 'text' ? xhr.responseText : `(${xhr.responseType})`;
    check(wanted.includes(xhr.status), `status ${xhr.status} (wanted ${wanted.join(' or ')}): ${text}`);
  }

  const text = 'hello from a web page ' + Date.now();
  const big = new Uint8Array(600 * 1024);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7 + 3) & 0xff;
  const bigBlob = new Blob([big], { type: 'application/octet-stream' });
  let uploadUrl = null;
  let downloadUrl = null;

  await step('multipart upload', async () => {
    const xhr = await storage.multipartUpload('web/notes/hello.txt', new Blob([text], { type: 'text/plain' }),
      { customMetadata: { source: 'browser' } });
    expectStatus(xhr, [200]);
    const body = json(xhr);
    check(body.name === 'web/notes/hello.txt', 'name ' + body.name);
    check(body.contentType === 'text/plain', 'contentType ' + body.contentType);
    check(body.metadata && body.metadata.source === 'browser', 'custom metadata ' + JSON.stringify(body.metadata));
    check(Number(body.size) === text.length, 'size ' + body.size);
    return `${body.name}, ${body.size} bytes`;
  });

  await step('resumable upload: start', async () => {
    const xhr = await storage.startResumable('web/big.bin', bigBlob, { customMetadata: { kind: 'resumable' } });
    expectStatus(xhr, [200]);
    check(xhr.getResponseHeader('X-Goog-Upload-Status') === 'active',
      'X-Goog-Upload-Status not readable or not active: ' + xhr.getResponseHeader('X-Goog-Upload-Status'));
    uploadUrl = xhr.getResponseHeader('X-Goog-Upload-URL');
    check(uploadUrl, 'X-Goog-Upload-URL is not readable by the page');
    return 'session ' + uploadUrl.replace(/^.*upload_id=/, 'upload_id=');
  });

  await step('resumable upload: first chunk', async () => {
    check(uploadUrl, 'no session');
    const xhr = await storage.continueResumable(uploadUrl, bigBlob, 0, 256 * 1024);
    expectStatus(xhr, [200]);
    check(xhr.getResponseHeader('X-Goog-Upload-Status') === 'active', 'status ' + xhr.getResponseHeader('X-Goog-Upload-Status'));
    return '262144 bytes, still active';
  });

  let interruptedReachedEnd = false;
  await step('resumable upload: interrupted chunk', async () => {
    check(uploadUrl, 'no session');
    try {
      // The rest of the file, aborted as soon as its upload starts: the connection drops mid-body.
      await storage.continueResumable(uploadUrl, bigBlob, 256 * 1024, 0, { onUploadStart: xhr => xhr.abort() });
      interruptedReachedEnd = true;
      return 'the chunk went through before it could be aborted';
    } catch (error) {
      check(error.aborted, 'unexpected error ' + error.message);
      return 'aborted by the page';
    }
  });

  let received = 0;
  await step('resumable upload: query after the interrupted chunk', async () => {
    check(uploadUrl, 'no session');
    const xhr = await storage.queryResumable(uploadUrl);
    expectStatus(xhr, [200]);
    const status = xhr.getResponseHeader('X-Goog-Upload-Status');
    const size = xhr.getResponseHeader('X-Goog-Upload-Size-Received');
    check(status === 'active' || (status === 'final' && interruptedReachedEnd), 'status ' + status);
    check(size !== null, 'X-Goog-Upload-Size-Received is not readable by the page');
    received = Number(size);
    check(status === 'final' ? received === big.length : received === 256 * 1024,
      `size received ${received} after a 262144-byte chunk and an interrupted one`);
    return `${status}, ${received} bytes received`;
  });

  await step('resumable upload: upload and finalize', async () => {
    check(uploadUrl, 'no session');
    if (received === big.length) return 'already final';
    const xhr = await storage.continueResumable(uploadUrl, bigBlob, received, 0);
    expectStatus(xhr, [200]);
    check(xhr.getResponseHeader('X-Goog-Upload-Status') === 'final', 'status ' + xhr.getResponseHeader('X-Goog-Upload-Status'));
    const body = json(xhr);
    check(Number(body.size) === big.length, 'size ' + body.size);
    check(body.metadata && body.metadata.kind === 'resumable', 'metadata ' + JSON.stringify(body.metadata));
    return `${body.name}, ${body.size} bytes`;
  });

  await step('getMetadata', async () => {
    const xhr = await storage.getMetadata('web/notes/hello.txt');
    expectStatus(xhr, [200]);
    const body = json(xhr);
    check(body.bucket === bucket && body.name === 'web/notes/hello.txt', 'resource ' + xhr.responseText);
    check(xhr.getResponseHeader('ETag'), 'ETag is not readable by the page');
    check(body.downloadTokens, 'no downloadTokens');
    return `metageneration ${body.metageneration}, ETag ${xhr.getResponseHeader('ETag')}`;
  });

  await step('updateMetadata (PATCH)', async () => {
    const xhr = await storage.updateMetadata('web/notes/hello.txt',
      { cacheControl: 'public,max-age=60', contentLanguage: 'en', customMetadata: { team: 'web' } });
    expectStatus(xhr, [200]);
    const body = json(xhr);
    check(body.cacheControl === 'public,max-age=60', 'cacheControl ' + body.cacheControl);
    check(body.metadata.team === 'web' && body.metadata.source === 'browser', 'metadata ' + JSON.stringify(body.metadata));
    check(body.metageneration === '2', 'metageneration ' + body.metageneration);
    return 'metageneration 2, custom metadata merged';
  });

  await step('getDownloadURL', async () => {
    const xhr = await storage.getMetadata('web/notes/hello.txt');
    expectStatus(xhr, [200]);
    downloadUrl = storage.downloadUrl(json(xhr));
    check(downloadUrl && downloadUrl.includes('alt=media&token='), 'download URL ' + downloadUrl);
    return downloadUrl.replace(storage.origin, '');
  });

  await step('download with the token (fetch)', async () => {
    check(downloadUrl, 'no download URL');
    const response = await fetch(downloadUrl);
    check(response.status === 200, 'status ' + response.status);
    const body = await response.text();
    check(body === text, 'bytes differ: ' + body);
    check(response.headers.get('x-goog-meta-team') === 'web', 'x-goog-meta-team not readable: ' + response.headers.get('x-goog-meta-team'));
    check(response.headers.get('x-goog-generation'), 'X-Goog-Generation not readable');
    return `${body.length} bytes, X-Goog-Meta-Team ${response.headers.get('x-goog-meta-team')}`;
  });

  await step('getBytes of the resumable upload', async () => {
    const xhr = await storage.getBytes('web/big.bin');
    expectStatus(xhr, [200]);
    const got = new Uint8Array(xhr.response);
    check(got.length === big.length, 'length ' + got.length);
    for (let i = 0; i < got.length; i++) check(got[i] === big[i], 'byte ' + i + ' differs');
    check(xhr.getResponseHeader('X-Goog-Hash'), 'X-Goog-Hash not readable');
    return `${got.length} bytes identical`;
  });

  await step('list with prefix and delimiter', async () => {
    const xhr = await storage.list('web', '/');
    expectStatus(xhr, [200]);
    const body = json(xhr);
    const items = (body.items || []).map(i => i.name);
    const prefixes = body.prefixes || [];
    check(JSON.stringify(items) === JSON.stringify(['web/big.bin']), 'items ' + JSON.stringify(items));
    check(JSON.stringify(prefixes) === JSON.stringify(['web/notes/']), 'prefixes ' + JSON.stringify(prefixes));
    return `items ${items.join(', ')}; prefixes ${prefixes.join(', ')}`;
  });

  await step('deleteObject', async () => {
    const xhr = await storage.deleteObject('web/notes/hello.txt');
    expectStatus(xhr, [200, 204]);
    return 'status ' + xhr.status;
  });

  await step('404 readable by the page', async () => {
    const xhr = await storage.getMetadata('web/notes/hello.txt');
    check(xhr.status === 404, 'status ' + xhr.status);
    const body = json(xhr);
    check(body.error && body.error.code === 404, 'error body ' + xhr.responseText);
    return body.error.message;
  });

  document.getElementById('status').textContent =
    `${results.filter(r => r.ok).length} passed, ${results.filter(r => !r.ok).length} failed`;
  window.__done = true;
})();

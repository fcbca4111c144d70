// What the Firebase JS SDK (firebase/storage, packages/storage/src/implementation/requests.ts and
// request.ts) sends on the wire, request by request, from a browser: XMLHttpRequest, the same
// URLs (makeUrl: `${protocol}://${host}/v0/b/{bucket}/o[/{path}]`, makeQueryString), the same
// methods, bodies and headers (X-Firebase-Storage-Version, X-Firebase-GMPID, Authorization:
// Firebase <token>, X-Goog-Upload-*). Written for this project; no SDK code is copied. PyPI ships
// no build of the SDK itself and npm is not reachable here, so this replica stands in for it.
'use strict';

class StorageReplica {
  // connectStorageEmulator(storage, host, port): storage.host = `${host}:${port}`, protocol http.
  constructor({ host, port, bucket, appId, authToken }) {
    this.origin = `http://${host}:${port}`;
    this.bucket = bucket;
    this.appId = appId;
    this.authToken = authToken;
  }

  // makeRequest: the headers every SDK request carries.
  commonHeaders(headers) {
    const all = Object.assign({}, headers);
    if (this.appId) all['X-Firebase-GMPID'] = this.appId;
    if (this.authToken) all['Authorization'] = 'Firebase ' + this.authToken;
    all['X-Firebase-Storage-Version'] = 'webjs/12.0.0';
    return all;
  }

  objectUrl(path) {
    return `${this.origin}/v0/b/${encodeURIComponent(this.bucket)}/o/${encodeURIComponent(path)}`;
  }

  bucketUrl() {
    return `${this.origin}/v0/b/${encodeURIComponent(this.bucket)}/o`;
  }

  static query(params) {
    const parts = Object.keys(params).map(k => encodeURIComponent(k) + '=' + encodeURIComponent(params[k]));
    return parts.length ? '?' + parts.join('&') : '';
  }

  // XhrConnection.send: open, setRequestHeader for each header, send(body). Resolves with the
  // XHR whatever the status (the SDK checks successCodes itself); rejects on a network error,
  // which is what a CORS failure looks like to a page.
  send(method, url, headers, body, { responseType, onUploadStart } = {}) {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open(method, url, true);
      if (responseType) xhr.responseType = responseType;
      const all = this.commonHeaders(headers || {});
      for (const key of Object.keys(all)) xhr.setRequestHeader(key, String(all[key]));
      xhr.addEventListener('load', () => resolve(xhr));
      xhr.addEventListener('error', () => reject(new Error(`network error (CORS?) on ${method} ${url}`)));
      xhr.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { aborted: true })));
      if (onUploadStart) xhr.upload.addEventListener('loadstart', () => onUploadStart(xhr));
      if (body === undefined) xhr.send(); else xhr.send(body);
    });
  }

  // toResourceString: the writable mappings only (name from fullPath, md5Hash, cacheControl,
  // contentDisposition, contentEncoding, contentLanguage, contentType, metadata from
  // customMetadata); JSON.stringify drops the undefined ones.
  static resource(metadata) {
    return JSON.stringify({
      name: metadata.fullPath,
      md5Hash: metadata.md5Hash,
      cacheControl: metadata.cacheControl,
      contentDisposition: metadata.contentDisposition,
      contentEncoding: metadata.contentEncoding,
      contentLanguage: metadata.contentLanguage,
      contentType: metadata.contentType,
      metadata: metadata.customMetadata,
    });
  }

  // metadataForUpload_: fullPath, size, and a content type from the metadata or the blob.
  static uploadMetadata(path, blob, metadata) {
    const clone = Object.assign({}, metadata);
    clone.fullPath = path;
    clone.size = blob.size;
    if (!clone.contentType) clone.contentType = blob.type || 'application/octet-stream';
    return clone;
  }

  // multipartUpload: POST /v0/b/{bucket}/o?name=..., X-Goog-Upload-Protocol: multipart.
  multipartUpload(path, blob, metadata) {
    const boundary = String(Math.random()).slice(2) + String(Math.random()).slice(2);
    const meta = StorageReplica.uploadMetadata(path, blob, metadata);
    const pre = '--' + boundary + '\r\nContent-Type: application/json; charset=utf-8\r\n\r\n' +
      StorageReplica.resource(meta) + '\r\n--' + boundary + '\r\nContent-Type: ' + meta.contentType + '\r\n\r\n';
    const post = '\r\n--' + boundary + '--';
    const headers = {
      'X-Goog-Upload-Protocol': 'multipart',
      'Content-Type': 'multipart/related; boundary=' + boundary,
    };
    return this.send('POST', this.bucketUrl() + StorageReplica.query({ name: path }), headers,
      new Blob([pre, blob, post]));
  }

  // createResumableUpload: the start command; the answer's X-Goog-Upload-URL is the session.
  startResumable(path, blob, metadata) {
    const meta = StorageReplica.uploadMetadata(path, blob, metadata);
    const headers = {
      'X-Goog-Upload-Protocol': 'resumable',
      'X-Goog-Upload-Command': 'start',
      'X-Goog-Upload-Header-Content-Length': `${blob.size}`,
      'X-Goog-Upload-Header-Content-Type': meta.contentType,
      'Content-Type': 'application/json; charset=utf-8',
    };
    return this.send('POST', this.bucketUrl() + StorageReplica.query({ name: path }), headers,
      StorageReplica.resource(meta));
  }

  // continueResumableUpload: 'upload', 'upload, finalize' or 'finalize' from an offset.
  continueResumable(url, blob, offset, chunkSize, options) {
    const left = blob.size - offset;
    const size = chunkSize > 0 ? Math.min(left, chunkSize) : left;
    const command = size === 0 ? 'finalize' : (size === left ? 'upload, finalize' : 'upload');
    const headers = { 'X-Goog-Upload-Command': command, 'X-Goog-Upload-Offset': `${offset}` };
    return this.send('POST', url, headers, blob.slice(offset, offset + size), options);
  }

  // getResumableUploadStatus: the query command.
  queryResumable(url) {
    return this.send('POST', url, { 'X-Goog-Upload-Command': 'query' });
  }

  getMetadata(path) { return this.send('GET', this.objectUrl(path)); }

  // updateMetadata: PATCH with the JSON resource.
  updateMetadata(path, metadata) {
    return this.send('PATCH', this.objectUrl(path), { 'Content-Type': 'application/json; charset=utf-8' },
      StorageReplica.resource(metadata));
  }

  // downloadUrlFromResourceString: the first download token, alt=media&token=...
  downloadUrl(resource) {
    const tokens = (resource.downloadTokens || '').split(',').filter(t => t.length > 0);
    if (!tokens.length) return null;
    return this.objectUrl(resource.name) + StorageReplica.query({ alt: 'media', token: tokens[0] });
  }

  // getBytes: GET ...?alt=media with the SDK's headers.
  getBytes(path) {
    return this.send('GET', this.objectUrl(path) + '?alt=media', {}, undefined, { responseType: 'arraybuffer' });
  }

  // list: prefix (path + '/'), delimiter, pageToken, maxResults.
  list(path, delimiter) {
    const params = { prefix: path ? path + '/' : '' };
    if (delimiter) params.delimiter = delimiter;
    return this.send('GET', this.bucketUrl() + StorageReplica.query(params));
  }

  deleteObject(path) { return this.send('DELETE', this.objectUrl(path)); }
}

window.StorageReplica = StorageReplica;

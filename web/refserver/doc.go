// Package refserver is the project's strict reference server for Google's
// media upload protocol: an [http.Handler] that implements the server side of
// docs/protocol.md sections 1-5 to the letter, with full CORS (section 6),
// a control API under /_ref/ and a scriptable fault injector in front of the
// protocol handler. It is used by the Go integration tests, the browser tests
// and the demo; it is never linked into the wasm binary.
//
// # Upload endpoints
//
// Any path under /upload/ (GCS shaped: /upload/storage/v1/b/BUCKET/o; the
// bucket is the segment after /b/, else "bucket") with the query parameter
// uploadType:
//
//   - media: POST or PUT, body = the bytes; 200 + object JSON.
//   - multipart: POST or PUT, multipart/related with exactly two parts,
//     metadata JSON then media (each with its Content-Type); 200 + object JSON.
//   - resumable: POST (create) or PUT (update) starts a session; 200 with an
//     absolute Location that carries upload_id. PUTs to that URI send chunks
//     (Content-Range: bytes a-b/T or bytes a-b/*), ask for the status
//     (bytes */T, bytes */*, empty body), or send the whole rest from byte 0
//     without Content-Range. Answers: 308 with Range: bytes=0-N (or 0-N with
//     range form "plain"), no Range when nothing is stored; 201 (session
//     started with POST) or 200 (PUT) with the object JSON once complete.
//
// The object name comes from the query parameter name, else the metadata's
// "name", else a generated one. Objects are keyed by name alone (a later
// upload of the same name replaces the earlier one, whatever the bucket).
//
// Strictness (each rule is commented with its docs/protocol.md section where it is
// enforced): a non-final chunk whose length is not a multiple of 262144, a
// chunk that starts past the stored offset, a total that conflicts with an
// earlier one or with X-Upload-Content-Length, a Content-Length that disagrees
// with the range, a malformed Content-Range or multipart body, and a hash that
// does not match the completed object (X-Goog-Hash's crc32c or md5, or the
// metadata's crc32c or md5Hash, where the JSON API takes a multipart upload's
// or a session's) all get 400, and leave the session as it was; a hash's is
// in Cloud Storage's words (Provided CRC32C "…" doesn't match calculated
// CRC32C "…".). Bytes before the stored offset are
// skipped (stored once, compared with nothing). Unknown session ids get 404.
// The bytes that arrived of a chunk whose body was cut off (the client aborted it, the
// connection broke) are kept, as Google's servers keep them (section 4), unless the chunk
// would have been refused whole; a cut body never completes the object, and a status query
// reports what was kept. Config "keepCut": false drops them instead.
// With X-GUploader-No-308: yes every 308 becomes 200 plus
// X-HTTP-Status-Code-Override: 308.
//
// The object JSON is GCS-like: the client's metadata fields merged with
// kind "storage#object", id, bucket, name, size (a decimal string), md5Hash
// and crc32c (base64, the CRC32C big-endian), contentType (the metadata's
// contentType, else the media type), generation, metageneration, timeCreated
// and updated.
//
// # The XML API's resumable uploads (xmlapi.go)
//
// POST /BUCKET/OBJECT with "x-goog-resumable: start" and an empty body, on a V4-signed-looking
// URL, starts a session of Cloud Storage's XML API: 201, Location the URL with its signed query
// and upload_id added, as Cloud Storage answers. The signature itself is not checked (the
// server holds no key); every V4 query parameter must be there and well formed, the URL not
// expired (400 ExpiredToken), and every header X-Goog-SignedHeaders names sent, host among them
// (403 SignatureDoesNotMatch). The object is named by the path, typed by the start's
// Content-Type; x-goog-meta-* headers are its custom metadata. The session's requests are
// those above; its final answer is 200 with no body, the object's hashes in X-Goog-Hash; its
// errors, and a fault's, are XML (<Error><Code>…</Code><Message>…</Message></Error>), a hash
// that does not match the completed object BadDigest.
//
// # Control API
//
//	GET    /_ref/objects         JSON array: object JSON plus "metadataJSON" (the client's metadata as sent, or null)
//	GET    /_ref/objects/{name}  the stored bytes
//	DELETE /_ref/objects/{name}  forgets the object and the completed sessions that stored it
//	GET    /_ref/faults          the current fault script
//	POST   /_ref/faults          {"rules":[Rule...],"random":{"seed":N,"rate":0.15}} replaces the fault script
//	DELETE /_ref/faults          clears it
//	GET    /_ref/log             JSON array of LogEntry (its "proto" is the request's HTTP version;
//	                             a chunk's "received" and "kept" count the bytes of its body read
//	                             and added to the stored bytes)
//	DELETE /_ref/log             clears it
//	GET    /_ref/config          {"sessionOrigin":"...","rangeForm":"bytes="|"plain","expose":"...","keepCut":true,
//	                              "link":{"bitsPerSecond":N,"rttMs":M,"queueMs":Q,"schedule":[...]}} (bitsPerSecond
//	                             and rttMs in force now; "schedule" while one is set)
//	POST   /_ref/config          sets any field (an absent field is left as it is; "" means the default;
//	                             a field refused with 400 sets none);
//	                             "link" emulates an uplink (package netlink) in front of every
//	                             route but /_ref/: bodies read at bitsPerSecond, answers rttMs
//	                             late; zeros (and POST /_ref/reset) take it away; or
//	                             "schedule":[{"atMs":0,"bitsPerSecond":N,"rttMs":M,"blackout":false},...]
//	                             makes a link that changes as time goes, from the first request
//	                             through it on (the first step at 0, each after the one before,
//	                             the last for ever; in a blackout nothing passes), in place of
//	                             bitsPerSecond and rttMs; "queueMs" (absent: as it is; reset: 1000)
//	                             is what a request its client gives up still delivers: up to
//	                             that many ms of the link, the oldest of its bytes, the requests
//	                             after it waiting behind them; 0 drops them all at once
//	                             (netlink.Link.SetQueue); "expose" replaces
//	                             Access-Control-Expose-Headers, to play a half-configured server;
//	                             "keepCut": false drops what arrived of a cut chunk (see below)
//	POST   /_ref/reset           clears objects, sessions, faults, log and config (back to Options)
//
// Control answers without data are 200 {"ok":true}. Errors, of the control
// API and of uploads alike, are shaped like Google's:
// {"error":{"code":400,"message":"...","errors":[{"domain":"global","reason":"invalid","message":"..."}]}}. Every route, control routes included, carries the CORS
// headers and answers preflights.
//
// # Faults
//
// The fault injector (type [Faults], [Rule], [Random]) sits in front of the
// protocol handler. Rules are tried in order; a rule matches a request by kind
// (start, chunk, query, media, multipart, any); the first Skip matching
// requests pass, then the rule fires Times times (0 means once, negative means
// always). The first rule that fires answers the request; later rules do not
// see it. When no rule fires, the random mode (if set) injects, for a Rate
// share of requests, one recoverable fault chosen with a generator seeded by
// Seed: deterministic for a given seed and request sequence. Preflights and
// control routes are never faulted. A close fault whose AfterBytes reach the
// end of the body lets the request be processed and drops only the answer
// (the "connection broke after the last byte" case of docs/protocol.md section 4).
//
// Over HTTP/2 a request has no connection of its own to drop: a close fault resets
// its stream instead (the handler panics with http.ErrAbortHandler, net/http sends
// RST_STREAM), which a browser reports as a network error just the same, while the
// connection goes on carrying the other requests.
//
// A corrupt fault changes one byte of the request's body on its way in (a faulty link or
// proxy) and processes it: only the hashes a client states let the server tell.
//
// A stall fault reads the body and then holds the request unanswered until the client
// gives up on it (a client without a timeout of its own hangs there for ever); nothing is
// stored.
//
// Every request to a non-control path, preflights included, is logged in
// arrival order with the fault it got; the fault is logged before it acts, so
// a client whose connection was dropped finds it in the log at once.
//
// # HTTPS and HTTP/2
//
// The Server is a plain http.Handler and serves whatever listener it is given.
// For HTTPS, and with it HTTP/2 (browsers speak HTTP/2 only over TLS, and
// Chromium streams a request body only over HTTP/2), [NewTestCertificate] makes
// a self-signed certificate for 127.0.0.1, ::1 and localhost at start (nothing
// on disk); its ServerConfig offers h2 and http/1.1 by ALPN, for an
// http.Server's ServeTLS. web/cmd/refserver -tls serves HTTPS beside HTTP with
// one state, and says how clients trust it (the certificate's SPKI hash and
// PEM). The emulated link holds per request over HTTP/2 too (package netlink).
package refserver

// Package core is the media upload protocol of docs/protocol.md sections 1–5 and nothing
// else: it decides which request comes next, what an answer means, whether and when to retry,
// and how far the upload has got. It never touches the network itself.
//
// The world is seen through four small interfaces it owns:
//
//   - [Transport] sends one [Request] and returns one [Response] (jsbridge implements it over
//     the browser's fetch, core/httptransport over net/http);
//   - [Source] hands out the bytes of the upload as [Piece] values, which a transport sends
//     without core ever reading them (a Blob slice in the browser);
//   - [Context], the two methods of context.Context that core uses (every context.Context is
//     one), for cancellation;
//   - [Clock], its time: package time's outside the browser (tests fake it with
//     testing/synctest), performance.now and setTimeout in it (clock.go says why).
//
// The pure decisions live in small files: range.go (the Range, Content-Range and Location
// headers), retry.go (which failures are retried and after how long), multipart.go (the
// multipart/related body), progress.go (loaded, confirmed and the smoothed rate), checksum.go
// with md5.go and jsonfield.go (the hashes and the final metadata's), session.go (sessions
// asked of the app's backend) and xmlapi.go (Cloud Storage's XML API: signed URLs, its
// answers). upload.go and resumable.go are the one driver loop that owns sleeping, pausing
// and cancellation.
//
// The package must stay small when compiled to WebAssembly: it imports neither fmt, net/url,
// net/http, encoding/json nor mime/multipart (imports_test.go enforces this), and avoids
// what measured heavy there: package time (211 KB, clock.go), crypto/md5, context,
// time.Parse, errors.As, strconv.ParseInt, Unicode-aware strings functions (the commit
// "core: fit the wasm budget" has the figures).
package core

// Package httptransport runs the protocol core over net/http, so Go programs can upload with
// it and the core can be tested end to end natively. The wasm never links this package: it
// would cost the browser module over 2 MB.
//
// [Transport] is a core.Transport over an *http.Client that never follows redirects (a 308 is
// the protocol's own answer, docs/protocol.md section 3). [ReaderAt] and [Reader] are core.Sources
// over an io.ReaderAt of known size and a stream of unknown length.
package httptransport

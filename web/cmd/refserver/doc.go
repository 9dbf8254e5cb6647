// Command refserver runs the strict reference server of package
// web/refserver on 127.0.0.1 for the browser tests and the demo.
//
//	go run ./web/cmd/refserver [-addr 127.0.0.1:0] [-alt-addr 127.0.0.1:0] [-range-form bytes=|plain] [-dir DIR] [-session-origin URL]
//
// It prints one JSON line on stdout once both listeners are up,
//
//	{"url":"http://127.0.0.1:P1","altURL":"http://127.0.0.1:P2"}
//
// (altURL only with -alt-addr; both listeners share one server's state), and
// serves until SIGINT or SIGTERM.
package main

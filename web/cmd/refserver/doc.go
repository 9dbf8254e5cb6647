// Command refserver runs the strict reference server of package
// web/refserver on 127.0.0.1 for the browser tests and the demo.
//
//	go run ./web/cmd/refserver [-addr 127.0.0.1:0] [-alt-addr 127.0.0.1:0] [-tls [-tls-addr 127.0.0.1:0] [-alt-tls-addr 127.0.0.1:0]]
//	    [-range-form bytes=|plain] [-dir DIR] [-session-origin URL]
//
// It prints one JSON line on stdout once every listener is up,
//
//	{"url":"http://127.0.0.1:P1","altURL":"http://127.0.0.1:P2"}
//
// (altURL only with -alt-addr; every listener shares one server's state), and
// serves until SIGINT or SIGTERM.
//
// # HTTPS and HTTP/2
//
// With -tls it also serves HTTPS, side by side with HTTP: one HTTPS listener
// beside each HTTP one (-tls-addr, and -alt-tls-addr with -alt-addr), same
// state, with a self-signed certificate for 127.0.0.1, ::1 and localhost made
// at start (refserver.NewTestCertificate; a new key every start, nothing on
// disk). HTTPS offers HTTP/2 and HTTP/1.1 by ALPN, so a browser speaks HTTP/2
// there (and can stream a request body, where it can at all); the HTTP
// listeners stay HTTP/1.1. The line then also carries
//
//	"tlsURL":"https://127.0.0.1:P3","altTLSURL":"https://127.0.0.1:P4",
//	"spki":"BASE64","certPEM":"-----BEGIN CERTIFICATE-----\n..."
//
// spki is the base64 SHA-256 of the certificate's public key, for Chromium's
// --ignore-certificate-errors-spki-list=; certPEM trusts it in a client of
// its own (Go's x509.CertPool, Node's tls `ca`). Each request's HTTP version
// is in the log (GET /_ref/log, field "proto"). The control API answers on
// every listener; a test drives it over plain HTTP.
package main

package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mediaupload/mediaupload/web/netlink"
	"github.com/mediaupload/mediaupload/web/refserver"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "refserver:", err)
		os.Exit(1)
	}
}

// announce is the JSON line printed once every listener is up (doc.go).
type announce struct {
	URL       string `json:"url"`
	AltURL    string `json:"altURL,omitempty"`
	TLSURL    string `json:"tlsURL,omitempty"`
	AltTLSURL string `json:"altTLSURL,omitempty"`
	H1TLSURL  string `json:"h1TLSURL,omitempty"`
	SPKI      string `json:"spki,omitempty"`
	CertPEM   string `json:"certPEM,omitempty"`
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	altAddr := flag.String("alt-addr", "", "optional second listen address (another origin, same state)")
	useTLS := flag.Bool("tls", false, "also serve HTTPS (HTTP/2 and HTTP/1.1 by ALPN) with a self-signed certificate made at start, beside each HTTP listener, and HTTPS with HTTP/1.1 only on one more")
	tlsAddr := flag.String("tls-addr", "127.0.0.1:0", "HTTPS listen address (with -tls)")
	altTLSAddr := flag.String("alt-tls-addr", "127.0.0.1:0", "second HTTPS listen address (with -tls and -alt-addr)")
	rangeForm := flag.String("range-form", refserver.RangeBytes, `Range header form of 308 answers: "bytes=" or "plain"`)
	dir := flag.String("dir", "", "keep objects in this folder (default: in memory)")
	origin := flag.String("session-origin", "", "origin of session URIs (default: the request's own)")
	flag.Parse()

	if *rangeForm != refserver.RangeBytes && *rangeForm != refserver.RangePlain {
		return fmt.Errorf("-range-form must be %q or %q", refserver.RangeBytes, refserver.RangePlain)
	}
	if *dir != "" {
		if err := os.MkdirAll(*dir, 0o755); err != nil {
			return err
		}
	}
	srv := refserver.New(refserver.Options{SessionOrigin: *origin, RangeForm: *rangeForm, Dir: *dir})

	var plain, secure, secureH1 []net.Listener
	listen := func(addr string, list *[]net.Listener) (string, error) {
		ln, err := netlink.Listen(addr)
		if err != nil {
			return "", err
		}
		*list = append(*list, ln)
		return ln.Addr().String(), nil
	}
	var out announce
	a, err := listen(*addr, &plain)
	if err != nil {
		return err
	}
	out.URL = "http://" + a
	if *altAddr != "" {
		if a, err = listen(*altAddr, &plain); err != nil {
			return err
		}
		out.AltURL = "http://" + a
	}
	// Every connection's body reader can tell that its client has gone (netlink.Listen).
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ConnContext: netlink.ConnContext}
	// HTTPS that offers HTTP/1.1 only (ALPN), as many servers still do: a browser that sends
	// stream bodies over HTTP/2 only must find out there and send Blobs.
	h1 := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ConnContext: netlink.ConnContext, TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){}}
	if *useTLS {
		cert, err := refserver.NewTestCertificate()
		if err != nil {
			return err
		}
		// One server for every listener, so one Shutdown ends them all; ServeTLS turns on
		// HTTP/2 for the TLS ones (ALPN "h2"), the plain ones stay HTTP/1.1.
		hs.TLSConfig = cert.ServerConfig()
		out.SPKI, out.CertPEM = cert.SPKI, string(cert.PEM)
		if a, err = listen(*tlsAddr, &secure); err != nil {
			return err
		}
		out.TLSURL = "https://" + a
		if *altAddr != "" {
			if a, err = listen(*altTLSAddr, &secure); err != nil {
				return err
			}
			out.AltTLSURL = "https://" + a
		}
		h1.TLSConfig = cert.ServerConfig()
		h1.TLSConfig.NextProtos = []string{"http/1.1"}
		if a, err = listen("127.0.0.1:0", &secureH1); err != nil {
			return err
		}
		out.H1TLSURL = "https://" + a
	}

	// Catch SIGTERM and SIGINT before the address is announced: whoever reads the line may
	// stop the server at once, and that must be a clean shutdown, not death by signal.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	errc := make(chan error, len(plain)+len(secure)+len(secureH1))
	for _, l := range plain {
		go func() { errc <- hs.Serve(l) }()
	}
	for _, l := range secure {
		go func() { errc <- hs.ServeTLS(l, "", "") }()
	}
	for _, l := range secureH1 {
		go func() { errc <- h1.ServeTLS(l, "", "") }()
	}
	line, err := json.Marshal(out)
	if err != nil {
		return err
	}
	// os.Stdout is not buffered: the line is out as soon as it is written.
	if _, err := os.Stdout.Write(append(line, '\n')); err != nil {
		return err
	}

	select {
	case <-ctx.Done():
	case err := <-errc:
		return err
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	hs.Shutdown(shutdown)
	h1.Shutdown(shutdown)
	return nil
}

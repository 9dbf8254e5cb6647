package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mediaupload/mediaupload/web/refserver"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "refserver:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	altAddr := flag.String("alt-addr", "", "optional second listen address (another origin, same state)")
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

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	listeners := []net.Listener{ln}
	out := struct {
		URL    string `json:"url"`
		AltURL string `json:"altURL,omitempty"`
	}{URL: "http://" + ln.Addr().String()}
	if *altAddr != "" {
		alt, err := net.Listen("tcp", *altAddr)
		if err != nil {
			return err
		}
		listeners = append(listeners, alt)
		out.AltURL = "http://" + alt.Addr().String()
	}

	// Catch SIGTERM and SIGINT before the address is announced: whoever reads the line may
	// stop the server at once, and that must be a clean shutdown, not death by signal.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, len(listeners))
	for _, l := range listeners {
		go func() { errc <- hs.Serve(l) }()
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
	return nil
}

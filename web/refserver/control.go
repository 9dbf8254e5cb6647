package refserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mediaupload/mediaupload/web/netlink"
)

// Config is the body of GET and POST /_ref/config. In a POST, a nil field is
// left as it is and "" means the default.
type Config struct {
	SessionOrigin *string `json:"sessionOrigin,omitempty"`
	RangeForm     *string `json:"rangeForm,omitempty"`
	// Link emulates an uplink in front of the upload routes (package netlink): bodies read
	// at BitsPerSecond, answers one RTTMs late. Zeros: loopback as it is.
	Link *LinkConfig `json:"link,omitempty"`
	// Expose is the Access-Control-Expose-Headers of every answer, to play a server whose CORS
	// configuration is half done (say "Location" alone); "" means the protocol's headers.
	Expose *string `json:"expose,omitempty"`
	// KeepCut says whether the bytes that arrived of a chunk cut off by the client or the
	// network are kept (true, the default, as Google's servers do: docs/protocol.md section 4),
	// or dropped, to play a server that keeps only whole chunks.
	KeepCut *bool `json:"keepCut,omitempty"`
}

// LinkConfig is Config.Link.
type LinkConfig struct {
	// BitsPerSecond and RTTMs make a steady link. In a GET they are the step in force now.
	BitsPerSecond int64 `json:"bitsPerSecond"`
	RTTMs         int64 `json:"rttMs"`
	// Schedule makes a link that changes as time goes (netlink.Link.SetSchedule); in a POST it
	// replaces BitsPerSecond and RTTMs, which are not used beside it. A GET shows it while one
	// is set.
	Schedule []LinkStep `json:"schedule,omitempty"`
	// QueueMs is what a request the client gives up still delivers (netlink.Link.SetQueue): up
	// to this many milliseconds of the link's rate, the oldest of the bytes it had handed over,
	// and the requests after it wait behind them; 0: none, all dropped at once. In a POST,
	// absent leaves it as it is (POST /_ref/reset: the default, netlink.DefaultQueue, 1000).
	QueueMs *int64 `json:"queueMs,omitempty"`
}

// LinkStep is one step of LinkConfig.Schedule (a netlink.Step): from AtMs after the schedule's
// start (the first request through the link after it was set), the link carries BitsPerSecond
// (0: unlimited) with a round trip of RTTMs, or nothing at all in a Blackout. The first step
// is at 0, each comes after the one before, and the last holds for ever.
type LinkStep struct {
	AtMs          int64 `json:"atMs"`
	BitsPerSecond int64 `json:"bitsPerSecond"`
	RTTMs         int64 `json:"rttMs"`
	Blackout      bool  `json:"blackout"`
}

// maxMs is the longest time in milliseconds a time.Duration holds.
const maxMs = int64(1<<63-1) / int64(time.Millisecond)

// setLink puts a posted link in force, or says what is wrong with it and leaves the link as
// it was.
func (s *Server) setLink(c *LinkConfig) error {
	if q := c.QueueMs; q != nil && (*q < 0 || *q > maxMs) {
		return errors.New("link: queueMs must not be negative")
	}
	if err := s.setRate(c); err != nil {
		return err
	}
	if c.QueueMs != nil {
		s.link.SetQueue(time.Duration(*c.QueueMs) * time.Millisecond)
	}
	return nil
}

// setRate puts a posted link's rate and round trip, or schedule, in force.
func (s *Server) setRate(c *LinkConfig) error {
	if c.Schedule == nil {
		if c.BitsPerSecond < 0 || c.RTTMs < 0 || c.RTTMs > maxMs {
			return errors.New("link: bitsPerSecond and rttMs must not be negative")
		}
		s.link.Set(c.BitsPerSecond/8, time.Duration(c.RTTMs)*time.Millisecond)
		return nil
	}
	steps := make([]netlink.Step, len(c.Schedule))
	for i, st := range c.Schedule {
		if st.AtMs < 0 || st.BitsPerSecond < 0 || st.RTTMs < 0 || st.AtMs > maxMs || st.RTTMs > maxMs {
			return fmt.Errorf("link: schedule step %d: atMs, bitsPerSecond and rttMs must not be negative", i)
		}
		steps[i] = netlink.Step{
			At:       time.Duration(st.AtMs) * time.Millisecond,
			Rate:     st.BitsPerSecond / 8,
			RTT:      time.Duration(st.RTTMs) * time.Millisecond,
			Blackout: st.Blackout,
		}
	}
	if err := s.link.SetSchedule(steps); err != nil {
		return errors.New("link: schedule: " + strings.TrimPrefix(err.Error(), "netlink: "))
	}
	return nil
}

// linkConfig is the link as GET /_ref/config shows it.
func (s *Server) linkConfig() *LinkConfig {
	rate, rtt := s.link.Get()
	queue := s.link.Queue().Milliseconds()
	c := &LinkConfig{BitsPerSecond: rate * 8, RTTMs: rtt.Milliseconds(), QueueMs: &queue}
	for _, st := range s.link.Schedule() {
		c.Schedule = append(c.Schedule, LinkStep{AtMs: st.At.Milliseconds(), BitsPerSecond: st.Rate * 8, RTTMs: st.RTT.Milliseconds(), Blackout: st.Blackout})
	}
	return c
}

// controlMux serves the control API; the routes and their JSON are
// listed in doc.go.
func (s *Server) controlMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_ref/objects", func(w http.ResponseWriter, r *http.Request) {
		objs := s.Objects()
		out := make([]map[string]any, len(objs))
		for i, o := range objs {
			out[i] = o.listing()
		}
		writeJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("GET /_ref/objects/{name...}", func(w http.ResponseWriter, r *http.Request) {
		o, data, ok := s.Object(r.PathValue("name"))
		if !ok {
			writeError(w, http.StatusNotFound, "no such object")
			return
		}
		w.Header().Set("Content-Type", o.ContentType)
		w.Header().Set("X-Goog-Hash", "crc32c="+o.CRC32C+",md5="+o.MD5Hash)
		w.Write(data)
	})
	mux.HandleFunc("DELETE /_ref/objects/{name...}", func(w http.ResponseWriter, r *http.Request) {
		if !s.DeleteObject(r.PathValue("name")) {
			writeError(w, http.StatusNotFound, "no such object")
			return
		}
		writeOK(w)
	})
	mux.HandleFunc("GET /_ref/faults", func(w http.ResponseWriter, r *http.Request) {
		f := s.CurrentFaults()
		if f.Rules == nil {
			f.Rules = []Rule{}
		}
		writeJSON(w, http.StatusOK, f)
	})
	mux.HandleFunc("POST /_ref/faults", func(w http.ResponseWriter, r *http.Request) {
		var f Faults
		if !readJSON(w, r, &f) {
			return
		}
		if err := s.SetFaults(f); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		writeOK(w)
	})
	mux.HandleFunc("DELETE /_ref/faults", func(w http.ResponseWriter, r *http.Request) {
		s.ClearFaults()
		writeOK(w)
	})
	mux.HandleFunc("GET /_ref/log", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Log())
	})
	mux.HandleFunc("DELETE /_ref/log", func(w http.ResponseWriter, r *http.Request) {
		s.ClearLog()
		writeOK(w)
	})
	mux.HandleFunc("GET /_ref/config", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.config())
	})
	mux.HandleFunc("POST /_ref/config", func(w http.ResponseWriter, r *http.Request) {
		var c Config
		if !readJSON(w, r, &c) {
			return
		}
		// Every field is checked before any is set: a refused POST changes nothing.
		if c.RangeForm != nil {
			if err := checkRangeForm(*c.RangeForm); err != nil {
				writeError(w, http.StatusBadRequest, err.Error())
				return
			}
		}
		if c.Link != nil {
			if err := s.setLink(c.Link); err != nil {
				writeError(w, http.StatusBadRequest, err.Error())
				return
			}
		}
		if c.RangeForm != nil {
			s.SetRangeForm(*c.RangeForm)
		}
		if c.SessionOrigin != nil {
			s.SetSessionOrigin(*c.SessionOrigin)
		}
		s.mu.Lock()
		if c.Expose != nil {
			s.expose = *c.Expose
		}
		if c.KeepCut != nil {
			s.dropCut = !*c.KeepCut
		}
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, s.config())
	})
	mux.HandleFunc("POST /_ref/reset", func(w http.ResponseWriter, r *http.Request) {
		s.Reset()
		writeOK(w)
	})
	mux.HandleFunc("/_ref/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such control route")
	})
	return mux
}

func (s *Server) config() Config {
	s.mu.Lock()
	origin, form, expose, keepCut := s.origin, s.form, s.expose, !s.dropCut
	s.mu.Unlock()
	return Config{SessionOrigin: &origin, RangeForm: &form, Link: s.linkConfig(), Expose: &expose, KeepCut: &keepCut}
}

// readJSON decodes a control request body, answering 400 when it is not
// valid JSON.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return false
	}
	if err := json.Unmarshal(b, v); err != nil {
		writeError(w, http.StatusBadRequest, "bad json: "+err.Error())
		return false
	}
	return true
}

func writeOK(w http.ResponseWriter) { writeJSON(w, http.StatusOK, map[string]bool{"ok": true}) }

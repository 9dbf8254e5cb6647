package main

import (
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/mediaupload/mediaupload/web/netlink"
)

// speed is the demo's "network speed": one emulated uplink (package netlink) in front of both
// upload servers, so that on loopback, where a file arrives in milliseconds, one can watch the
// chunks grow, the bars move, pause and cancel. The page sets it with
// POST /api/throttle {"bytesPerSecond": N, "rttMs": M} (zeros: no limit, no delay); a change
// reaches the uploads under way as well as the next ones. "queueMs" (absent: as it is; 1000 at
// start, netlink.DefaultQueue) is what a request given up still delivers, as a real uplink's
// queue does (netlink.Link.SetQueue); 0 drops it at once.
type speed struct{ link netlink.Link }

func (s *speed) wrap(h http.Handler) http.Handler { return s.link.Wrap(h) }

func (s *speed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
	case http.MethodPost:
		var body struct {
			BytesPerSecond int64  `json:"bytesPerSecond"`
			RTTMs          int64  `json:"rttMs"`
			QueueMs        *int64 `json:"queueMs"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<10)).Decode(&body); err != nil {
			http.Error(w, "serve: body must be {\"bytesPerSecond\": N, \"rttMs\": M} (and \"queueMs\": Q, if wanted)", http.StatusBadRequest)
			return
		}
		s.link.Set(body.BytesPerSecond, time.Duration(body.RTTMs)*time.Millisecond)
		if body.QueueMs != nil {
			s.link.SetQueue(time.Duration(*body.QueueMs) * time.Millisecond)
		}
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "serve: use GET or POST", http.StatusMethodNotAllowed)
		return
	}
	rate, rtt := s.link.Get()
	writeJSON(w, map[string]int64{"bytesPerSecond": rate, "rttMs": rtt.Milliseconds(), "queueMs": s.link.Queue().Milliseconds()})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}

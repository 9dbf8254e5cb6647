package refserver

import "net/http"

// keepCut keeps what arrived of a chunk whose body was cut off: the client aborted the
// request, or the connection broke. Google's servers keep the bytes that arrived of an
// interrupted request, and the status query after it reports them (docs/protocol.md section 4;
// the guide's own example: a request of 2,000,000 bytes interrupted, then Range: 0-42), so the
// client must resume from the server's Range, not from where its last whole chunk ended.
//
// Only what the chunk would have stored whole is kept: nothing of a chunk that would have been
// refused (docs/protocol.md section 3), and the bytes beyond those stored, with the session's
// checksums going on over them. A cut body never completes the object, even when all its
// bytes arrived: the request failed, and a status query stating the total finishes it (section
// 4). Config.KeepCut false plays a server that drops them; an injected keep fault plays its own
// server, as the other injected faults do (a close, a stall: the protocol handler never reads
// their bodies), and keeps nothing of a cut body. It runs under s.mu, as the rest.
func (h uploadHandler) keepCut(r *http.Request, id string, cr contentRange, body []byte, ahead *checksums) {
	if _, ok := keepFrom(r.Context()); ok {
		return
	}
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[id]
	if s.dropCut || !ok || sess.done {
		return
	}
	if checkLength(r, cr) != nil || int64(len(body)) > cr.last-cr.first+1 || sess.checkTotal(cr.total) != nil {
		return
	}
	if _, err := sess.checkPlace(cr); err != nil {
		return
	}
	fresh, sum := sess.fresh(cr.first, body, ahead)
	sess.add(fresh, sum, cr.total)
	entryFrom(r.Context()).addKept(len(fresh))
}

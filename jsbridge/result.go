//go:build js && wasm

package jsbridge

import (
	"github.com/mediaupload/mediaupload/core"
)

// The reports go to the host as objects of primitives, {type, ...fields} (engine/host.js
// lists them): the host and the loader build the events and results from them.

// fail reports err as the upload's end: {type: "fail", code, message, status, responseText,
// sessionURL, reason, serverMessage}. status, responseText, reason and serverMessage come
// from the last answer the error holds, if any (reason and serverMessage: Google's JSON
// error's); the host adds the JS error behind the failure as its cause.
func (c *conn) fail(err error, sessionURL string) {
	status, text, reason, message := 0, "", "", ""
	// The HTTPError may be inside a RetriesExhaustedError or a SessionExpiredError.
	if he, ok := core.Find[*core.HTTPError](err); ok {
		status, text, reason, message = he.Status, string(he.Body), he.Reason, he.Message
	} else if pe, ok := core.Find[*core.ProtocolError](err); ok {
		status = pe.Status
	}
	c.report("fail", map[string]any{"code": core.Code(err), "message": err.Error(), "status": status,
		"responseText": text, "sessionURL": sessionURL, "reason": reason, "serverMessage": message})
}

// progressReport is the progress report's fields; secondsLeft is null where there is no
// estimate.
func progressReport(p core.Progress) map[string]any {
	var left any
	if p.SecondsLeft >= 0 {
		left = p.SecondsLeft
	}
	return map[string]any{"loaded": p.Loaded, "total": p.Total, "confirmed": p.Confirmed, "bytesPerSecond": p.BytesPerSecond, "secondsLeft": left}
}

// retryReport is the retry report's fields.
func retryReport(r core.RetryInfo) map[string]any {
	return map[string]any{"attempt": r.Attempt, "delayMs": ms(r.Delay), "status": r.Status, "error": errString(r.Err), "restart": r.Restart}
}

// requestReport is the request report's fields; error is null when an answer arrived.
func requestReport(r core.RequestInfo) map[string]any {
	return map[string]any{"method": r.Method, "url": r.URL, "contentRange": r.ContentRange, "status": r.Status, "ms": ms(r.Duration), "error": errString(r.Err)}
}

func ms(d core.Duration) float64 { return float64(d) / float64(core.Millisecond) }

func errString(err error) any {
	if err == nil {
		return nil
	}
	return err.Error()
}

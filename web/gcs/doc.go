// Package gcs is the backend half of an upload to Cloud Storage: the app's server starts the
// resumable session (or signs a URL that starts one) for a page, so that the page uploads
// with the module and holds no credential. It is native Go for the app's backend; the wasm
// never imports it.
//
// It owns:
//   - Client.StartSession: a JSON API resumable start (POST
//     /upload/storage/v1/b/BUCKET/o?uploadType=resumable) with the page's Origin, exactly, so
//     that Cloud Storage answers the session's chunks with that origin's CORS headers; it
//     returns the session URI.
//   - Client.SignStart: a V4 signed URL for the XML API's POST with x-goog-resumable: start,
//     and the headers the page must send with it (the signature covers them), made by
//     cloud.google.com/go/storage's SignedURL.
//   - Handler: the endpoint a page asks (POST JSON {name, size, type, metadata}); the app's
//     Authorize callback decides who may upload what; limits (size, types, Cloud Storage's
//     naming rules) and the page's Origin are checked before any request to Cloud Storage;
//     every refusal is a JSON {"error": {"code", "message"}} with a stable code.
//
// Credentials are Application Default Credentials, through Google's libraries:
// cloud.google.com/go/auth for the tokens, cloud.google.com/go/storage for signing (a key, or
// IAM signBlob). Options.Endpoint, or STORAGE_EMULATOR_HOST as Google's clients read it,
// points the Client at an emulator, which needs no credentials. Tokens and keys never reach
// the page: an answer holds a session URI or a signed URL and nothing else.
//
// The rules it follows, and the wire format between page and handler, are docs/protocol.md
// section 10.
//
//	client, err := gcs.NewClient(ctx, gcs.Options{}) // Application Default Credentials
//	h, err := gcs.NewHandler(gcs.HandlerConfig{
//		Client:  client,
//		Origins: []string{"https://app.example.com"},
//		MaxSize: 1 << 30,
//		Types:   []string{"image/*", "video/*"},
//		Authorize: func(r *http.Request, f gcs.File) (gcs.Object, error) {
//			user, ok := userOf(r) // the app's own sign-in
//			if !ok {
//				return gcs.Object{}, gcs.Unauthorized("sign in to upload")
//			}
//			return gcs.Object{Bucket: "my-bucket", Name: "uploads/" + user + "/" + f.Name}, nil
//		},
//	})
//	http.Handle("/api/upload-session", h)
package gcs

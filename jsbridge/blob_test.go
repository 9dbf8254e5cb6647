//go:build js && wasm

package jsbridge

import (
	"bytes"
	"runtime"
	"syscall/js"
	"testing"

	"github.com/mediaupload/mediaupload/core"
)

func TestBlobSourceSlicesWithoutReading(t *testing.T) {
	data := randomBytes(1000)
	src, err := NewBlobSource(blobOf(data, "image/png"))
	if err != nil {
		t.Fatal(err)
	}
	if src.Size() != 1000 {
		t.Fatalf("Size = %d", src.Size())
	}
	for _, c := range []struct{ a, b, want int64 }{{0, 1000, 1000}, {100, 300, 200}, {900, 5000, 100}, {1000, 2000, 0}} {
		p, err := src.Slice(c.a, c.b)
		if err != nil {
			t.Fatal(err)
		}
		bp, ok := p.(BlobPiece)
		if !ok {
			t.Fatalf("Slice gave a %T, want a BlobPiece", p)
		}
		if !bp.Value().InstanceOf(js.Global().Get("Blob")) || int64(bp.Value().Get("size").Int()) != c.want || bp.Len() != c.want {
			t.Fatalf("Slice(%d, %d): size %d, Len %d, want %d", c.a, c.b, bp.Value().Get("size").Int(), bp.Len(), c.want)
		}
		if got := blobBytes(t, bp.Value()); !bytes.Equal(got, data[c.a:c.a+c.want]) {
			t.Fatalf("Slice(%d, %d): wrong bytes", c.a, c.b)
		}
	}
	if _, err := src.Slice(10, 5); err == nil {
		t.Fatal("Slice(10, 5) did not fail")
	}
}

func TestBlobSourceNeverCopies(t *testing.T) {
	src, err := NewBlobSource(bigBlob(256))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var pieces []core.Piece
	for off := int64(0); off < src.Size(); off += 8 << 20 {
		p, err := src.Slice(off, off+8<<20)
		if err != nil {
			t.Fatal(err)
		}
		pieces = append(pieces, p)
	}
	body, _ := bodyOf([]core.Piece{core.Bytes("--prefix\r\n"), pieces[3], core.Bytes("\r\n--suffix--")})
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("slicing 256 MiB allocated %d bytes in Go", grew)
	}
	if !body.InstanceOf(js.Global().Get("Blob")) || body.Get("size").Int() != 8<<20+10+12 {
		t.Fatalf("multipart body: %v of size %v", body, body.Get("size"))
	}
}

func TestNewBlobSourceRefusesNonBlobs(t *testing.T) {
	for _, v := range []js.Value{js.Undefined(), js.Null(), js.ValueOf("text"), js.Global().Get("Object").New(),
		jsFunc("return Object.create(Blob.prototype)").Invoke()} {
		if _, err := NewBlobSource(v); err == nil {
			t.Errorf("NewBlobSource(%v) did not fail", v)
		}
	}
}

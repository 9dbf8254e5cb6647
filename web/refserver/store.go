package refserver

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Object describes a stored object. Its JSON form is what GET /_ref/objects
// lists, without the merged client fields; Resource gives the GCS-like JSON.
type Object struct {
	Name        string    `json:"name"`
	Bucket      string    `json:"bucket"`
	Size        int64     `json:"size,string"`
	MD5Hash     string    `json:"md5Hash"`     // base64 of the MD5 digest
	CRC32C      string    `json:"crc32c"`      // base64 of the big-endian CRC32C
	ContentType string    `json:"contentType"` // the metadata's contentType, else the media type
	Generation  int64     `json:"generation,string"`
	Created     time.Time `json:"timeCreated"`
	// MetadataJSON is the client's metadata as sent (a JSON object), or nil.
	MetadataJSON json.RawMessage `json:"metadataJSON"`
}

// Resource returns the GCS-like object JSON the upload answers carry: the
// client's metadata fields merged with the server's (which win).
func (o Object) Resource() map[string]any {
	m := map[string]any{}
	if len(o.MetadataJSON) > 0 {
		_ = json.Unmarshal(o.MetadataJSON, &m) // validated on upload
	}
	gen := strconv.FormatInt(o.Generation, 10)
	created := o.Created.UTC().Format(time.RFC3339Nano)
	m["kind"] = "storage#object"
	m["id"] = o.Bucket + "/" + o.Name + "/" + gen
	m["bucket"] = o.Bucket
	m["name"] = o.Name
	m["size"] = strconv.FormatInt(o.Size, 10)
	m["md5Hash"] = o.MD5Hash
	m["crc32c"] = o.CRC32C
	m["contentType"] = o.ContentType
	m["generation"] = gen
	m["metageneration"] = "1"
	m["timeCreated"] = created
	m["updated"] = created
	return m
}

// listing is one element of GET /_ref/objects: the object JSON plus
// metadataJSON.
func (o Object) listing() map[string]any {
	m := o.Resource()
	if len(o.MetadataJSON) > 0 {
		m["metadataJSON"] = o.MetadataJSON
	} else {
		m["metadataJSON"] = nil
	}
	return m
}

type storedObject struct {
	Object
	data []byte // nil when kept in Options.Dir
}

// putObject stores a completed object, under s.mu.
func (s *Server) putObject(o Object, data []byte) error {
	so := &storedObject{Object: o, data: data}
	if s.opts.Dir != "" {
		if err := os.MkdirAll(s.opts.Dir, 0o755); err != nil {
			return err
		}
		meta, err := json.Marshal(o)
		if err != nil {
			return err
		}
		base := s.fileBase(o.Name)
		if err := os.WriteFile(base+".data", data, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(base+".json", meta, 0o644); err != nil {
			return err
		}
		so.data = nil
	}
	s.objects[o.Name] = so
	return nil
}

func (s *Server) objectData(o *storedObject) ([]byte, error) {
	if s.opts.Dir == "" {
		return o.data, nil
	}
	return os.ReadFile(s.fileBase(o.Name) + ".data")
}

func (s *Server) removeFiles(o *storedObject) {
	if s.opts.Dir == "" {
		return
	}
	base := s.fileBase(o.Name)
	os.Remove(base + ".data")
	os.Remove(base + ".json")
}

// fileBase names an object's files by the hex of its name, so that any name
// (slashes, "..") is a plain file name.
func (s *Server) fileBase(name string) string {
	return filepath.Join(s.opts.Dir, "obj-"+hex.EncodeToString([]byte(name)))
}

// loadDir loads the objects kept in Options.Dir, skipping unreadable files.
func (s *Server) loadDir() {
	if s.opts.Dir == "" {
		return
	}
	entries, err := os.ReadDir(s.opts.Dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "obj-") || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(s.opts.Dir, e.Name()))
		if err != nil {
			continue
		}
		var o Object
		if json.Unmarshal(b, &o) != nil || o.Name == "" {
			continue
		}
		if _, err := os.Stat(s.fileBase(o.Name) + ".data"); err != nil {
			continue
		}
		s.objects[o.Name] = &storedObject{Object: o}
		s.seq = max(s.seq, o.Generation)
	}
}

// objectList returns the objects sorted by name, under s.mu.
func (s *Server) objectList() []Object {
	out := make([]Object, 0, len(s.objects))
	for _, o := range s.objects {
		out = append(out, o.Object)
	}
	slices.SortFunc(out, func(a, b Object) int { return strings.Compare(a.Name, b.Name) })
	return out
}

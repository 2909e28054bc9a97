package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/voicetest-go/voicetest/internal/atomicfile"
)

// Cache is a record/replay store in one directory. It is safe for
// concurrent use by many goroutines, and several processes may share the
// directory: every file is written to a temporary name, synced and renamed
// into place, so a reader sees a whole old file or a whole new one.
//
// Identical keys asked for concurrently through one Cache are produced
// once (single flight); the other callers wait for that answer.
type Cache struct {
	dir      string // as given, used in messages
	mode     Mode
	name     string
	usageDir string
	logf     func(format string, args ...any)
	now      func() time.Time
	midWrite func(tmp string) // crash tests only: see writeAtomic

	mu        sync.Mutex
	flight    map[string]*call
	used      map[string]bool
	refreshed map[string]bool
	closed    bool
}

// call is one in-flight production of a key.
type call struct {
	done chan struct{}
	res  stored
	err  error
}

// Option configures Open.
type Option func(*Cache)

// WithMode sets the mode. Without it, Open uses DefaultMode.
func WithMode(m Mode) Option {
	return func(c *Cache) { c.mode = m }
}

// WithName sets the test name that miss errors name and whose -run pattern
// their record command uses. ForTest sets it to t.Name().
func WithName(test string) Option {
	return func(c *Cache) { c.name = test }
}

// WithUsageDir makes the cache write the entries it uses (hits and new
// records) into a file in dir, so voicetest-update can prune unused
// entries. Without it, Open uses $VOICETEST_CACHE_USAGE, if set.
func WithUsageDir(dir string) Option {
	return func(c *Cache) { c.usageDir = dir }
}

// WithLogf sets a function that is told about every entry recorded or
// refreshed, such as testing.TB.Logf.
func WithLogf(logf func(format string, args ...any)) Option {
	return func(c *Cache) { c.logf = logf }
}

// withClock sets the clock that stamps new entries (tests only).
func withClock(now func() time.Time) Option {
	return func(c *Cache) { c.now = now }
}

// withMidWrite sets a function writeAtomic calls halfway through writing
// each temporary file (crash tests only).
func withMidWrite(f func(tmp string)) Option {
	return func(c *Cache) { c.midWrite = f }
}

// Open returns a cache storing its entries under dir, which is created when
// the first entry is written. Without WithMode the mode comes from
// DefaultMode, which fails on a bad -voicetest.cache flag or VOICETEST_CACHE
// value.
func Open(dir string, opts ...Option) (*Cache, error) {
	if dir == "" {
		return nil, errors.New("voicetest/cache: Open needs a directory, e.g. \"testdata/voicetest/cache\"")
	}
	c := &Cache{
		dir:       dir,
		mode:      -1,
		usageDir:  os.Getenv(EnvUsage),
		now:       time.Now,
		flight:    map[string]*call{},
		used:      map[string]bool{},
		refreshed: map[string]bool{},
	}
	for _, o := range opts {
		o(c)
	}
	if c.mode == -1 {
		m, err := DefaultMode()
		if err != nil {
			return nil, err
		}
		c.mode = m
	}
	if c.mode < Replay || c.mode > Off {
		return nil, fmt.Errorf("voicetest/cache: invalid mode %v", c.mode)
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("voicetest/cache: %s is a file, not a cache directory", dir)
	}
	return c, nil
}

// Mode returns the cache's mode.
func (c *Cache) Mode() Mode { return c.mode }

// Dir returns the directory the cache stores its entries in.
func (c *Cache) Dir() string { return c.dir }

// Close marks the cache as finished: later calls fail instead of writing
// after their test has ended. Entries and usage are written as they happen,
// so Close has nothing to flush. It is safe to call more than once.
func (c *Cache) Close() error {
	c.mu.Lock()
	c.closed = true
	c.logf = nil
	c.mu.Unlock()
	return nil
}

// stored is an answer as it is kept on disk.
type stored struct {
	data []byte
	ext  string // body file extension, without the dot
	typ  string // media type of the body
	meta respMeta
}

// respMeta is the response metadata kept in an entry file.
type respMeta struct {
	Status   int               `json:"status,omitempty"`
	Header   map[string]string `json:"header,omitempty"`
	Rate     int               `json:"rate,omitempty"`
	Samples  int               `json:"samples,omitempty"`
	Duration string            `json:"duration,omitempty"`
	Chars    int               `json:"chars,omitempty"`
	Redacted bool              `json:"redacted,omitempty"`
}

// entryFormat is the value of "format" in every entry file.
const entryFormat = "voicetest-cache/v1"

// entryFile is the JSON entry stored next to each body file.
type entryFile struct {
	Format   string          `json:"format"`
	Key      string          `json:"key"`
	Kind     string          `json:"kind"`
	Provider string          `json:"provider"`
	Model    string          `json:"model,omitempty"`
	Fields   json.RawMessage `json:"fields"`
	Created  string          `json:"created"`
	Body     bodyRef         `json:"body"`
	Response respMeta        `json:"response"`
}

// bodyRef points from an entry to its body file.
type bodyRef struct {
	File   string `json:"file"`
	Type   string `json:"type"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// request is one key being asked for, with what error messages need.
type request struct {
	key     Key
	digest  string
	summary func() string // nil: derived from the key
}

func (c *Cache) newRequest(key Key, summary func() string) (request, error) {
	digest, err := key.Digest()
	if err != nil {
		return request{}, err
	}
	return request{key: key, digest: digest, summary: summary}, nil
}

// describe returns the request's one-line summary, computed only when an
// error or a log line needs it.
func (r request) describe() string {
	if r.summary != nil {
		return r.summary()
	}
	return r.key.summary()
}

func (c *Cache) entryPath(r request) string {
	return filepath.Join(c.dir, r.key.Kind, r.digest+".json")
}

// get answers r from the store or from produce, according to the mode.
// valid, when not nil, checks an answer: one that fails is neither stored
// nor served (see InvalidError).
func (c *Cache) get(ctx context.Context, r request, produce func(context.Context) (stored, error), valid func(stored) error) (stored, error) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return stored{}, fmt.Errorf("voicetest/cache: cache %s used after Close (after its test ended?)", c.dir)
	}
	if err := ctx.Err(); err != nil {
		return stored{}, err
	}
	if valid == nil {
		valid = func(stored) error { return nil }
	}
	switch c.mode {
	case Off:
		s, err := c.produce(ctx, r, produce)
		if err == nil {
			err = c.check(r, s, valid, false)
		}
		return s, err
	case Replay, Record:
		s, err := c.usable(r, valid)
		if err == nil {
			return s, c.markUsed(r)
		}
		var ie *InvalidError
		switch {
		case errors.As(err, &ie) && c.mode == Record:
			// Recorded before its check existed: record it again.
		case !errors.Is(err, fs.ErrNotExist):
			return stored{}, err
		case c.mode == Replay:
			return stored{}, c.missError(r)
		}
	}
	for {
		s, err, retry := c.single(ctx, r, produce, valid)
		if !retry {
			return s, err
		}
	}
}

// usable loads the entry for r and checks it with valid.
func (c *Cache) usable(r request, valid func(stored) error) (stored, error) {
	s, err := c.load(r)
	if err != nil {
		return stored{}, err
	}
	if err := c.check(r, s, valid, true); err != nil {
		return stored{}, err
	}
	return s, nil
}

// check returns an *InvalidError when valid rejects s.
func (c *Cache) check(r request, s stored, valid func(stored) error, fromDisk bool) error {
	verr := valid(s)
	if verr == nil {
		return nil
	}
	return &InvalidError{Kind: r.key.Kind, Provider: r.key.Provider, Model: r.key.Model, Path: c.entryPath(r),
		Stored: fromDisk, Err: verr, Command: r.key.envAssignments() + recordCommand(c.name, "-voicetest.record")}
}

// single runs produce once per digest at a time. Followers get a copy of
// the leader's answer; retry is true when the leader's context ended but
// the follower's did not.
func (c *Cache) single(ctx context.Context, r request, produce func(context.Context) (stored, error), valid func(stored) error) (s stored, err error, retry bool) {
	c.mu.Lock()
	if cl, ok := c.flight[r.digest]; ok {
		c.mu.Unlock()
		select {
		case <-cl.done:
		case <-ctx.Done():
			return stored{}, ctx.Err(), false
		}
		if cl.err != nil && (errors.Is(cl.err, context.Canceled) || errors.Is(cl.err, context.DeadlineExceeded)) && ctx.Err() == nil {
			return stored{}, nil, true
		}
		res := cl.res
		res.data = bytes.Clone(res.data)
		return res, cl.err, false
	}
	cl := &call{done: make(chan struct{}), err: errors.New("voicetest/cache: the producer of this answer panicked")}
	c.flight[r.digest] = cl
	refreshed := c.refreshed[r.digest]
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.flight, r.digest)
		c.mu.Unlock()
		close(cl.done)
	}()
	s, err = c.lead(ctx, r, produce, valid, refreshed)
	cl.res, cl.err = s, err
	return s, err, false
}

// lead produces and stores the answer for r, unless another goroutine,
// Cache or process stored a usable one meanwhile (Record), or this Cache
// already refreshed it (Refresh). An answer valid rejects is not stored.
func (c *Cache) lead(ctx context.Context, r request, produce func(context.Context) (stored, error), valid func(stored) error, refreshed bool) (stored, error) {
	if c.mode == Record || refreshed {
		s, err := c.usable(r, valid)
		if err == nil {
			return s, c.markUsed(r)
		}
		var ie *InvalidError
		if !errors.Is(err, fs.ErrNotExist) && !errors.As(err, &ie) {
			return stored{}, err
		}
	}
	s, err := c.produce(ctx, r, produce)
	if err != nil {
		return stored{}, err
	}
	if err := c.check(r, s, valid, false); err != nil {
		return stored{}, err
	}
	if c.mode == Off {
		return s, nil
	}
	if err := c.store(r, s); err != nil {
		return stored{}, err
	}
	c.mu.Lock()
	c.refreshed[r.digest] = true
	c.mu.Unlock()
	return s, c.markUsed(r)
}

// errNoProducer is returned when an answer must be produced but the caller
// passed a nil producer (fine in Replay mode, where none is called).
var errNoProducer = errors.New("no producer given (nil func): pass one, or use replay mode")

func (c *Cache) produce(ctx context.Context, r request, produce func(context.Context) (stored, error)) (stored, error) {
	s, err := produce(ctx)
	if err != nil {
		return stored{}, fmt.Errorf("voicetest/cache: %s from %s: %w", r.key.Kind, r.key.Provider, err)
	}
	if s.data == nil {
		s.data = []byte{}
	}
	return s, nil
}

func (c *Cache) missError(r request) error {
	flagArg := "-voicetest.record"
	return &MissError{
		Test:     c.name,
		Kind:     r.key.Kind,
		Provider: r.key.Provider,
		Model:    r.key.Model,
		Summary:  r.describe(),
		Inputs:   r.key.inputs(),
		Digest:   r.digest,
		Path:     c.entryPath(r),
		Command:  r.key.envAssignments() + recordCommand(c.name, flagArg),
	}
}

func (c *Cache) corrupt(path, reason string, err error) error {
	return &CorruptError{Path: path, Reason: reason, Err: err, Command: recordCommand(c.name, "-voicetest.record")}
}

// load reads and verifies the entry for r. A missing entry is an error
// wrapping fs.ErrNotExist; anything else wrong is a *CorruptError.
func (c *Cache) load(r request) (stored, error) {
	path := c.entryPath(r)
	raw, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return stored{}, err
		}
		return stored{}, fmt.Errorf("voicetest/cache: reading entry: %w", err)
	}
	e, err := parseEntry(raw)
	if err != nil {
		return stored{}, c.corrupt(path, "entry does not parse", err)
	}
	if e.Key != r.digest {
		return stored{}, c.corrupt(path, fmt.Sprintf("entry key %q does not match its file name", e.Key), nil)
	}
	if e.Kind != r.key.Kind || e.Provider != r.key.Provider || e.Model != r.key.Model {
		return stored{}, c.corrupt(path, fmt.Sprintf("entry is for %s %s %q, not %s %s %q", e.Kind, e.Provider, e.Model, r.key.Kind, r.key.Provider, r.key.Model), nil)
	}
	if !validBodyName(r.digest, e.Body.File) {
		return stored{}, c.corrupt(path, fmt.Sprintf("body file name %q is not %s.<hash>.<ext>", e.Body.File, r.digest), nil)
	}
	bodyPath := filepath.Join(filepath.Dir(path), e.Body.File)
	data, err := os.ReadFile(bodyPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return stored{}, c.corrupt(path, "its body file "+e.Body.File+" is missing", nil)
		}
		return stored{}, fmt.Errorf("voicetest/cache: reading body: %w", err)
	}
	if int64(len(data)) != e.Body.Size {
		return stored{}, c.corrupt(bodyPath, fmt.Sprintf("%d bytes, but the entry recorded %d (truncated?)", len(data), e.Body.Size), nil)
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != e.Body.SHA256 {
		return stored{}, c.corrupt(bodyPath, "content does not match the SHA-256 recorded in its entry", nil)
	}
	ext := e.Body.File[strings.LastIndexByte(e.Body.File, '.')+1:]
	return stored{data: data, ext: ext, typ: e.Body.Type, meta: e.Response}, nil
}

// parseEntry decodes an entry file and checks its format version.
func parseEntry(raw []byte) (*entryFile, error) {
	var e entryFile
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, err
	}
	if e.Format != entryFormat {
		return nil, fmt.Errorf("format %q, want %q", e.Format, entryFormat)
	}
	return &e, nil
}

// validBodyName reports whether name is "<digest>.<12 hex>.<ext>".
func validBodyName(digest, name string) bool {
	rest, ok := strings.CutPrefix(name, digest+".")
	if !ok || len(rest) < 14 || rest[12] != '.' {
		return false
	}
	for i := 0; i < 12; i++ {
		if !strings.ContainsRune(hexDigits, rune(rest[i])) {
			return false
		}
	}
	return validExt(rest[13:])
}

func validExt(ext string) bool {
	if ext == "" || len(ext) > 8 {
		return false
	}
	for i := 0; i < len(ext); i++ {
		if c := ext[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// store writes the body file, then the entry, each atomically. The body
// file name carries a hash of its content, so concurrent writers of
// different answers never mix an entry with another writer's body.
func (c *Cache) store(r request, s stored) error {
	err := c.writeEntry(r, s)
	if err != nil && errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("%w; recording writes the cache under %s: make it writable, or replay only (-voicetest.cache=replay or VOICETEST_CACHE=replay)", err, c.dir)
	}
	return err
}

// writeEntry writes r's answer s as an entry and a body file.
func (c *Cache) writeEntry(r request, s stored) error {
	if !validExt(s.ext) {
		return fmt.Errorf("voicetest/cache: invalid body extension %q", s.ext)
	}
	fields, err := displayFields(r.key.Fields)
	if err != nil {
		return fmt.Errorf("voicetest/cache: key fields: %w", err)
	}
	fieldsJSON, err := canonical(fields)
	if err != nil {
		return fmt.Errorf("voicetest/cache: key fields: %w", err)
	}
	sum := sha256.Sum256(s.data)
	sumHex := hex.EncodeToString(sum[:])
	e := entryFile{
		Format:   entryFormat,
		Key:      r.digest,
		Kind:     r.key.Kind,
		Provider: r.key.Provider,
		Model:    r.key.Model,
		Fields:   fieldsJSON,
		Created:  c.now().UTC().Format(time.RFC3339),
		Body:     bodyRef{File: r.digest + "." + sumHex[:12] + "." + s.ext, Type: s.typ, Size: int64(len(s.data)), SHA256: sumHex},
		Response: s.meta,
	}
	path := c.entryPath(r)
	dir := filepath.Dir(path)
	// An identical answer already on disk keeps its file and created time,
	// so refreshing an unchanged answer makes no diff.
	if old, err := os.ReadFile(path); err == nil {
		if oe, err := parseEntry(old); err == nil && oe.Body == e.Body && sameMeta(oe.Response, e.Response) && bytes.Equal(compactJSON(oe.Fields), fieldsJSON) {
			if b, err := os.ReadFile(filepath.Join(dir, oe.Body.File)); err == nil && bytes.Equal(b, s.data) {
				return nil
			}
		}
	}
	if err := mkdirAllSynced(dir); err != nil {
		return fmt.Errorf("voicetest/cache: creating cache directory: %w", err)
	}
	// The body is renamed into place and its directory synced before the
	// entry that names it is written, so no crash leaves an entry pointing
	// to a body that is not there.
	if err := writeAtomic(filepath.Join(dir, e.Body.File), s.data, c.midWrite); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&e); err != nil {
		return fmt.Errorf("voicetest/cache: encoding entry: %w", err)
	}
	if err := writeAtomic(path, buf.Bytes(), c.midWrite); err != nil {
		return err
	}
	c.mu.Lock()
	logf := c.logf
	c.mu.Unlock()
	if logf != nil {
		logf("voicetest/cache: %s %s: %s", c.mode, path, r.describe())
	}
	return nil
}

func compactJSON(raw []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

func sameMeta(a, b respMeta) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// tempMarker is what the name of every temporary file the cache writes
// holds: ".<final name>.tmp-<random digits>". The leading dot hides it,
// and no entry or body name starts with a dot, so a reader never takes it
// for an entry. A writer killed before its rename leaves one behind;
// voicetest-update removes those older than a few minutes.
const tempMarker = atomicfile.TempMarker

// writeAtomic writes data to path with atomicfile.Write: readers never see
// a partial file and, once it returns, the new file survives a crash or a
// power loss. midWrite is atomicfile.Write's crash-test hook.
func writeAtomic(path string, data []byte, midWrite func(tmp string)) error {
	if err := atomicfile.Write(path, data, midWrite); err != nil {
		return fmt.Errorf("voicetest/cache: %w", err)
	}
	return nil
}

// mkdirAllSynced creates dir and its missing parents, syncing the new
// names (atomicfile.MkdirAll).
func mkdirAllSynced(dir string) error { return atomicfile.MkdirAll(dir) }

// markUsed records that the entry for r was used, once per Cache, in the
// usage directory if there is one.
func (c *Cache) markUsed(r request) error {
	if c.usageDir == "" {
		return nil
	}
	path := c.entryPath(r)
	c.mu.Lock()
	seen := c.used[path]
	c.used[path] = true
	c.mu.Unlock()
	if seen {
		return nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("voicetest/cache: recording use of %s: %w", path, err)
	}
	if err := appendUsage(c.usageDir, abs); err != nil {
		c.mu.Lock()
		delete(c.used, path)
		c.mu.Unlock()
		return err
	}
	return nil
}

// appendUsage appends one line naming an entry file to this process's
// usage file in dir. One write call per line with O_APPEND keeps lines
// whole when many goroutines of the process append at once.
func appendUsage(dir, entry string) error {
	name := filepath.Join(dir, "usage-"+strconv.Itoa(os.Getpid())+".txt")
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("voicetest/cache: recording use of %s (%s=%s): %w", entry, EnvUsage, dir, err)
	}
	_, werr := f.WriteString(entry + "\n")
	cerr := f.Close()
	if werr != nil || cerr != nil {
		return fmt.Errorf("voicetest/cache: recording use of %s in %s: %w", entry, name, errors.Join(werr, cerr))
	}
	return nil
}

// Text returns the text answer for key: from the store, or from produce
// (according to the mode), stored as a UTF-8 .txt body file.
func (c *Cache) Text(ctx context.Context, key Key, produce func(context.Context) (string, error)) (string, error) {
	r, err := c.newRequest(key, nil)
	if err != nil {
		return "", err
	}
	s, err := c.get(ctx, r, func(ctx context.Context) (stored, error) {
		if produce == nil {
			return stored{}, errNoProducer
		}
		text, err := produce(ctx)
		if err != nil {
			return stored{}, err
		}
		return stored{data: []byte(text), ext: "txt", typ: "text/plain; charset=utf-8", meta: respMeta{Chars: utf8.RuneCountInString(text)}}, nil
	}, nil)
	if err != nil {
		return "", err
	}
	return string(s.data), nil
}

// DoJSON returns the answer for key as a T: from the store, or from produce
// (according to the mode), stored as an indented JSON body file. The value
// returned after recording is decoded from the stored JSON, exactly as a
// later replay decodes it, so record and replay give the same T.
func DoJSON[T any](ctx context.Context, c *Cache, key Key, produce func(context.Context) (T, error)) (T, error) {
	return DoJSONChecked(ctx, c, key, produce, nil)
}

// DoJSONChecked is DoJSON for answers that can be wrong (a model's JSON
// that does not parse or validate): check, when not nil, says whether an
// answer is usable. An answer it rejects is never stored as a good entry,
// and never served: a fresh one fails with an *InvalidError saying what
// was wrong and the command that asks again; an entry recorded before the
// check existed fails the same way in replay mode, and is recorded again
// in record mode.
func DoJSONChecked[T any](ctx context.Context, c *Cache, key Key, produce func(context.Context) (T, error), check func(T) error) (T, error) {
	var zero T
	r, err := c.newRequest(key, nil)
	if err != nil {
		return zero, err
	}
	var valid func(stored) error
	if check != nil {
		valid = func(s stored) error {
			var v T
			if err := json.Unmarshal(s.data, &v); err != nil {
				return fmt.Errorf("the body does not decode as %T: %w", v, err)
			}
			return check(v)
		}
	}
	s, err := c.get(ctx, r, func(ctx context.Context) (stored, error) {
		if produce == nil {
			return stored{}, errNoProducer
		}
		v, err := produce(ctx)
		if err != nil {
			return stored{}, err
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return stored{}, fmt.Errorf("answer of type %T cannot be stored as JSON: %w", v, err)
		}
		return stored{data: buf.Bytes(), ext: "json", typ: "application/json"}, nil
	}, valid)
	if err != nil {
		return zero, err
	}
	var out T
	if err := json.Unmarshal(s.data, &out); err != nil {
		return zero, c.corrupt(c.bodyPath(r, s), fmt.Sprintf("body does not decode as %T", out), err)
	}
	return out, nil
}

func (c *Cache) bodyPath(r request, s stored) string {
	sum := sha256.Sum256(s.data)
	return filepath.Join(c.dir, r.key.Kind, r.digest+"."+hex.EncodeToString(sum[:])[:12]+"."+s.ext)
}

// Audio is PCM16 little-endian mono audio at a sample rate, as TTS engines
// produce it. It is stored as a canonical 16-bit mono WAV body file.
type Audio struct {
	// Rate is the sample rate in samples per second.
	Rate int
	// PCM holds the samples, two little-endian bytes each.
	PCM []byte
}

// Audio returns the audio answer for key: from the store, or from produce
// (according to the mode). Audio with a rate ≤ 0 or an odd number of bytes
// is an error and is not stored.
func (c *Cache) Audio(ctx context.Context, key Key, produce func(context.Context) (Audio, error)) (Audio, error) {
	r, err := c.newRequest(key, nil)
	if err != nil {
		return Audio{}, err
	}
	s, err := c.get(ctx, r, func(ctx context.Context) (stored, error) {
		if produce == nil {
			return stored{}, errNoProducer
		}
		a, err := produce(ctx)
		if err != nil {
			return stored{}, err
		}
		wav, err := encodeWAV(a.Rate, a.PCM)
		if err != nil {
			return stored{}, fmt.Errorf("invalid audio: %w", err)
		}
		n := len(a.PCM) / 2
		return stored{data: wav, ext: "wav", typ: "audio/wav", meta: respMeta{
			Rate:     a.Rate,
			Samples:  n,
			Duration: (time.Duration(n) * time.Second / time.Duration(a.Rate)).String(),
		}}, nil
	}, nil)
	if err != nil {
		return Audio{}, err
	}
	rate, pcm, err := decodeWAV(s.data)
	if err != nil {
		return Audio{}, c.corrupt(c.bodyPath(r, s), "audio body", err)
	}
	if rate != s.meta.Rate || len(pcm)/2 != s.meta.Samples {
		return Audio{}, c.corrupt(c.entryPath(r), fmt.Sprintf("entry says %d samples at %d Hz, body holds %d at %d Hz", s.meta.Samples, s.meta.Rate, len(pcm)/2, rate), nil)
	}
	return Audio{Rate: rate, PCM: pcm}, nil
}

package cache_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest/cache"
)

// Disk faults: a process killed while it writes an entry, and a cache
// directory it may not write.

const (
	envWriterDir = "VOICETEST_FAULT_WRITER_DIR" // child: rewrite an entry in a loop
	envROChild   = "VOICETEST_FAULT_RO_DIR"     // child: record into a read-only dir
)

var killKey = cache.Key{Kind: "tts", Provider: "fault", Model: "big", Fields: map[string]any{"text": "a long answer"}}

// bigAudio is 4 MB of audio whose every sample is v: a reader can tell
// which write it sees, and that it is whole.
func bigAudio(v int16) cache.Audio {
	pcm := make([]byte, 4<<20)
	for i := 0; i < len(pcm); i += 2 {
		binary.LittleEndian.PutUint16(pcm[i:], uint16(v))
	}
	return cache.Audio{Rate: 24000, PCM: pcm}
}

// writerChild refreshes killKey with new audio in a loop, printing the
// number of each write it finished, until it is killed.
func writerChild(dir string) {
	c, err := cache.Open(dir, cache.WithMode(cache.Refresh))
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	for i := int16(1); ; i++ {
		if _, err := c.Audio(context.Background(), killKey, func(context.Context) (cache.Audio, error) { return bigAudio(i), nil }); err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
		// A new Cache per write: Refresh calls the producer once per key
		// per Cache.
		c.Close()
		if c, err = cache.Open(dir, cache.WithMode(cache.Refresh)); err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
		fmt.Println("wrote", i)
	}
}

func TestFaultProcessKilledMidWriteKeepsThePreviousEntry(t *testing.T) {
	if dir := os.Getenv(envWriterDir); dir != "" {
		writerChild(dir)
		return
	}
	dir := t.TempDir()
	// Kill the writer at different points of its write cycle (4 MB body
	// to a temp file, fsync, rename, then the entry the same way).
	for round, delay := range []time.Duration{0, 3 * time.Millisecond, 11 * time.Millisecond, 29 * time.Millisecond, 53 * time.Millisecond, 97 * time.Millisecond} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFaultProcessKilledMidWriteKeepsThePreviousEntry$")
		cmd.Env = append(os.Environ(), envWriterDir+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		last := 0
		// Wait for a first whole write (or, after round 0, any line), then
		// kill in the middle of a later one.
		if !sc.Scan() || !strings.HasPrefix(sc.Text(), "wrote ") {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: the writer said %q, err %v", round, sc.Text(), sc.Err())
		}
		last, _ = strconv.Atoi(strings.TrimPrefix(sc.Text(), "wrote "))
		time.Sleep(delay)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for sc.Scan() {
			if n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "wrote ")); err == nil {
				last = n
			}
		}
		cmd.Wait()

		c := replay(t, dir)
		a, err := c.Audio(context.Background(), killKey, nil)
		if err != nil {
			t.Fatalf("round %d (killed %v after write %d): the entry is unreadable: %v", round, delay, last, err)
		}
		v := int16(binary.LittleEndian.Uint16(a.PCM))
		if len(a.PCM) != 4<<20 || int(v) < last || int(v) > last+1 {
			t.Fatalf("round %d: read %d bytes of write %d; the last finished write was %d", round, len(a.PCM), v, last)
		}
		for i := 0; i < len(a.PCM); i += 2 {
			if int16(binary.LittleEndian.Uint16(a.PCM[i:])) != v {
				t.Fatalf("round %d: sample %d is from another write than sample 0 (%d): a torn file", round, i/2, v)
			}
		}
		t.Logf("round %d: killed %v after write %d; the entry holds write %d", round, delay, last, v)
	}
	// A killed writer leaves its temporary files behind (hidden, never read
	// as entries); report how many, for the record.
	tmp, _ := filepath.Glob(filepath.Join(dir, "tts", ".*.tmp-*"))
	t.Logf("%d temporary files left by killed writers", len(tmp))
}

// roChild records an entry into dir as an unprivileged user and prints the
// error.
func roChild(dir string) {
	if os.Geteuid() == 0 {
		// Root ignores permissions: act as nobody.
		if err := syscall.Setgid(65534); err != nil {
			fmt.Println("setgid:", err)
			os.Exit(2)
		}
		if err := syscall.Setuid(65534); err != nil {
			fmt.Println("setuid:", err)
			os.Exit(2)
		}
	}
	c, err := cache.Open(dir, cache.WithMode(cache.Record))
	if err != nil {
		fmt.Println("open:", err)
		return
	}
	defer c.Close()
	_, err = c.Text(context.Background(), fuzzTextKey, func(context.Context) (string, error) { return "hi", nil })
	fmt.Println("text:", err)
}

func TestFaultReadOnlyCacheDirInRecordMode(t *testing.T) {
	if dir := os.Getenv(envROChild); dir != "" {
		roChild(dir)
		return
	}
	base := t.TempDir()
	// Let an unprivileged child reach base: the directories this test
	// made are opened to it; os.TempDir and those above it are not this
	// test's to change, so when one of them shuts other users out (a
	// private TMPDIR), the child could not reach the cache at all.
	for d := base; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()) && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	for d := os.TempDir(); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			t.Skipf("%s (mode %v) is not searchable by other users, so the unprivileged child cannot reach the cache under it; run with a TMPDIR others can search, such as /tmp", d, fi.Mode().Perm())
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) string // returns the cache dir
		want  string                    // the directory the error must name
	}{
		{"cache dir read-only", func(t *testing.T) string {
			d := filepath.Join(base, "a", "testdata", "voicetest", "cache")
			if err := os.MkdirAll(filepath.Join(d, "tts"), 0o755); err != nil {
				t.Fatal(err)
			}
			os.Chmod(filepath.Join(d, "tts"), 0o555)
			return d
		}, "/a/testdata/voicetest/cache/tts"},
		{"testdata read-only, cache dir missing", func(t *testing.T) string {
			td := filepath.Join(base, "b", "testdata")
			if err := os.MkdirAll(td, 0o555); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(td, "voicetest", "cache")
		}, "/b/testdata/voicetest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.setup(t)
			cmd := exec.Command(os.Args[0], "-test.run=^TestFaultReadOnlyCacheDirInRecordMode$")
			cmd.Env = append(os.Environ(), envROChild+"="+dir)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			msg := string(out)
			if strings.HasPrefix(msg, "setuid:") || strings.HasPrefix(msg, "setgid:") {
				t.Skipf("cannot drop privileges to test permissions: %s", msg)
			}
			if !strings.Contains(msg, "text: voicetest/cache:") || !strings.Contains(msg, "permission denied") || !strings.Contains(msg, "make it writable, or replay only") || !strings.Contains(msg, filepath.Join(base, tc.want)) {
				t.Errorf("recording into a read-only directory said:\n%s\nwant an error naming %s and saying permission denied", msg, filepath.Join(base, tc.want))
			}
			if _, err := os.Stat(filepath.Join(dir, "tts")); err == nil {
				entries, _ := os.ReadDir(filepath.Join(dir, "tts"))
				if len(entries) != 0 {
					t.Errorf("files written despite the error: %v", entries)
				}
			} else if !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
		})
	}
}

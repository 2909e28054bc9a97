package pipecatpb_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/pipecat/pipecatpb"
	"google.golang.org/protobuf/proto"
)

// toolVersions matches the header lines that name the generators'
// versions, which may differ from machine to machine without changing the
// code.
var toolVersions = regexp.MustCompile(`(?m)^// \tprotoc(-gen-go)? .*\n`)

// TestGeneratedCodeIsCurrent regenerates frames.pb.go from frames.proto
// with the go generate line's command and compares: the committed code
// must be what the real toolchain makes of the committed .proto. It needs
// protoc (Debian's protobuf-compiler) and protoc-gen-go, which .ci/run
// installs.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		t.Fatal("protoc is not on PATH: apt-get install protobuf-compiler (.ci/run does)")
	}
	path := os.Getenv("PATH")
	if gopath, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		path = filepath.Join(strings.TrimSpace(string(gopath)), "bin") + string(os.PathListSeparator) + path
	}
	out := t.TempDir()
	cmd := exec.Command(protoc, "--proto_path=.", "--go_out="+out, "--go_opt=paths=source_relative",
		"--go_opt=Mframes.proto=github.com/voicetest-go/voicetest/adapters/pipecat/pipecatpb", "frames.proto")
	cmd.Env = append(os.Environ(), "PATH="+path)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s\n(install protoc-gen-go: go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12; .ci/run does)", err, msg)
	}
	got, err := os.ReadFile(filepath.Join(out, "frames.pb.go"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("frames.pb.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(toolVersions.ReplaceAll(got, nil), toolVersions.ReplaceAll(want, nil)) {
		t.Error("frames.pb.go is not what protoc makes of frames.proto: run go generate ./adapters/pipecat/pipecatpb")
	}
}

// The generated types read the bytes Pipecat's Python serializer writes:
// Frame{audio: AudioRawFrame{audio: b"\x01\x02", sample_rate: 16000,
// num_channels: 1}}, whose encoding is fixed by the .proto's field numbers.
func TestWireCompatible(t *testing.T) {
	// field 2 (audio), length 9: field 3 bytes "\x01\x02", field 4 varint
	// 16000, field 5 varint 1.
	wire := []byte{0x12, 0x09, 0x1a, 0x02, 0x01, 0x02, 0x20, 0x80, 0x7d, 0x28, 0x01}
	var f pipecatpb.Frame
	if err := proto.Unmarshal(wire, &f); err != nil {
		t.Fatal(err)
	}
	a := f.GetAudio()
	if a == nil || !bytes.Equal(a.Audio, []byte{1, 2}) || a.SampleRate != 16000 || a.NumChannels != 1 {
		t.Fatalf("decoded %v", &f)
	}
	back, err := proto.Marshal(&f)
	if err != nil || !bytes.Equal(back, wire) {
		t.Errorf("re-encoded % x, want % x", back, wire)
	}
}

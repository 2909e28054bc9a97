package cache

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestParseMode(t *testing.T) {
	for _, m := range []Mode{Replay, Record, Refresh, Off} {
		got, err := ParseMode(" " + strings.ToUpper(m.String()) + " ")
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := ParseMode("recrod"); err == nil || !strings.Contains(err.Error(), "replay, record, refresh or off") {
		t.Errorf("ParseMode(recrod): %v", err)
	}
	if s := Mode(7).String(); s != "Mode(7)" {
		t.Errorf("Mode(7).String() = %q", s)
	}
}

func TestResolveMode(t *testing.T) {
	tests := []struct {
		name    string
		flag    string
		rec     bool
		env     map[string]string
		want    Mode
		wantErr string
	}{
		{name: "default local", want: Record},
		{name: "default CI", env: map[string]string{"CI": "true"}, want: Replay},
		{name: "CI=false is local", env: map[string]string{"CI": "false"}, want: Record},
		{name: "CI=0 is local", env: map[string]string{"CI": "0"}, want: Record},
		{name: "env mode beats CI", env: map[string]string{"CI": "1", EnvMode: "refresh"}, want: Refresh},
		{name: "env record beats CI", env: map[string]string{"CI": "1", EnvRecord: "1"}, want: Record},
		{name: "env record off", env: map[string]string{"CI": "1", EnvRecord: "0"}, want: Replay},
		{name: "flag beats env", flag: "off", env: map[string]string{EnvMode: "refresh"}, want: Off},
		{name: "record flag beats env", rec: true, env: map[string]string{EnvMode: "replay", "CI": "1"}, want: Record},
		{name: "record flag with record mode", flag: "record", rec: true, want: Record},
		{name: "bad flag", flag: "sometimes", wantErr: "-voicetest.cache"},
		{name: "bad env", env: map[string]string{EnvMode: "sometimes"}, wantErr: EnvMode},
		{name: "conflicting flags", flag: "replay", rec: true, wantErr: "drop one"},
		{name: "conflicting env", env: map[string]string{EnvMode: "off", EnvRecord: "true"}, wantErr: "drop one"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolveMode(tc.flag, tc.rec, func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("resolveMode = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestFlagsRegisteredInTests(t *testing.T) {
	if cacheFlag == nil || recordFlag == nil {
		t.Fatal("test flags not registered although testing.Testing() is true")
	}
}

func TestDefaultModeFromEnv(t *testing.T) {
	if *cacheFlag != "" || *recordFlag {
		t.Skip("a -voicetest flag is set; it takes precedence over the environment")
	}
	t.Setenv(EnvMode, "off")
	t.Setenv(EnvRecord, "")
	if m, err := DefaultMode(); err != nil || m != Off {
		t.Errorf("DefaultMode with %s=off: %v, %v", EnvMode, m, err)
	}
	t.Setenv(EnvMode, "bogus")
	if _, err := Open(t.TempDir()); err == nil {
		t.Error("Open with a bad VOICETEST_CACHE: want an error")
	}
}

func TestWAVRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 1000} {
		pcm := testPCM(n, 5)
		wav, err := encodeWAV(16000, pcm)
		if err != nil {
			t.Fatal(err)
		}
		rate, got, err := decodeWAV(wav)
		if err != nil || rate != 16000 || !bytes.Equal(got, pcm) {
			t.Errorf("%d samples: rate %d, equal %v, %v", n, rate, bytes.Equal(got, pcm), err)
		}
	}
}

func TestWAVStrict(t *testing.T) {
	good, _ := encodeWAV(8000, testPCM(10, 1))
	mut := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := map[string][]byte{
		"empty":          nil,
		"short header":   good[:20],
		"truncated data": good[:len(good)-2],
		"trailing bytes": append(bytes.Clone(good), 0, 0),
		"not RIFF":       mut(func(b []byte) []byte { copy(b, "RIFX"); return b }),
		"float format":   mut(func(b []byte) []byte { b[20] = 3; return b }),
		"stereo":         mut(func(b []byte) []byte { b[22] = 2; return b }),
		"8 bit":          mut(func(b []byte) []byte { b[34] = 8; return b }),
		"zero rate":      mut(func(b []byte) []byte { copy(b[24:28], []byte{0, 0, 0, 0}); return b }),
		"bad byte rate":  mut(func(b []byte) []byte { b[28]++; return b }),
		"no data chunk":  mut(func(b []byte) []byte { copy(b[36:], "LIST"); return b }),
		"odd data": mut(func(b []byte) []byte {
			b = b[:len(b)-1]
			b[4]--
			b[40]--
			return b
		}),
	}
	for name, data := range cases {
		if _, _, err := decodeWAV(data); !errors.Is(err, errWAV) {
			t.Errorf("%s: decodeWAV error = %v, want errWAV", name, err)
		}
	}
	if _, err := encodeWAV(8000, []byte{1}); err == nil {
		t.Error("encodeWAV of odd bytes: want an error")
	}
	if _, err := encodeWAV(0, nil); err == nil {
		t.Error("encodeWAV at rate 0: want an error")
	}
}

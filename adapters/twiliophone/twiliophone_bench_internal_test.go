package twiliophone

import (
	"context"
	"encoding/base64"
	"math"
	"testing"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/internal/evqueue"
	"github.com/voicetest-go/voicetest/adapters/internal/silencegate"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// BenchmarkMedia measures one media message of the call (20 ms of µ-law
// speech): JSON, base64, µ-law decoding, the silence gate, resampling to a
// 24 kHz session and the queue (drained each time). Bytes are the message's.
func BenchmarkMedia(b *testing.B) {
	tone := make([]int16, 160)
	for i := range tone {
		tone[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/8000))
	}
	msg := []byte(`{"event":"media","sequenceNumber":"3","streamSid":"MZ1","media":{"track":"inbound","chunk":"1","timestamp":"20","payload":"` +
		base64.StdEncoding.EncodeToString(pcm.EncodeMulaw(nil, tone)) + `"}}`)
	sc := scrub.New()
	c := &conn{sc: sc, call: evqueue.NewCall(adapterName, 1<<30, "Agent.MaxQueueBytes", sc, func(string, ...any) {}, wire.NewCaptureWriter(nil, nil), nil),
		down: wire.Downstream{Rate: 24000}, gate: silencegate.Gate{Threshold: DefaultSilenceThreshold, MaxPause: maxPause}}
	st := &stream{streamSid: "MZ1"}
	ctx := context.Background()
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		c.message(st, websocket.MessageText, msg)
		if _, err := c.call.Recv(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

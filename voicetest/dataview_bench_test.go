package voicetest_test

import (
	"encoding/json"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest"
)

// BenchmarkXMLView measures the default data view on a booking form of
// typical size (14 fields, a list of six times, one nested object; 298
// bytes of JSON).
func BenchmarkXMLView(b *testing.B) {
	e := voicetest.Event{Type: voicetest.EventData, Text: "booking_form", Data: json.RawMessage(`{"form":"booking","restaurant":"Bella Vista","day":"friday","date":"2026-11-27","party":2,"time":null,"free":["18:00","18:30","19:00","19:30","21:00","21:30"],"seating":{"area":"terrace","high_chair":false,"accessible":true},"name":"","phone":"","notes":"","deposit":12.5,"currency":"EUR","step":2}`)}
	b.ReportAllocs()
	b.SetBytes(int64(len(e.Data)))
	for b.Loop() {
		if voicetest.DefaultDataView(e) == "" {
			b.Fatal("nothing shown")
		}
	}
}

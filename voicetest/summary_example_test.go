package voicetest_test

import "github.com/voicetest-go/voicetest/voicetest"

// A package opts in to the suite summary with a TestMain; go test -v (or
// -voicetest.summary) then prints it after the tests, e.g.
//
//	voicetest summary: 12 scenarios, 11 passed, 1 failed, 0 inconclusive (pass rate 91.7%)
//	  user turns: 31; conversation time: 1m4.2s
//	  response latency over 29 turns: p50 410ms, p95 930ms, mean 452ms
//	  FAIL TestBooking ("books a table"): ...
func ExampleMain() {
	// In a _test.go file:
	//
	//	func TestMain(m *testing.M) { voicetest.Main(m) }
	var _ = voicetest.Main
}

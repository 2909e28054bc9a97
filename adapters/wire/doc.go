// Package wire is what every adapter that reaches its agent over a
// WebSocket shares: the settings of the connection (WSOptions), the errors
// it reports (FrameError), its wire capture (CaptureRecord, ReadCapture),
// the answer to client tool calls (ToolHandler), and the machinery the
// protocol packages under adapters/ are built on: Dial and Conn (one reader
// goroutine, keepalive, bounded writes, batched into few system calls
// when they come in a burst, capture of every frame, a Close that
// releases everything), the refusal of plain-text URLs (RequireTLS),
// the scrubbing of credentials from URLs and errors, the streaming
// resampling of the user's audio (Upstream) and the checks every Conn
// makes of what it is asked to send.
//
// A test imports a protocol's package (adapters/twilio, adapters/realtime,
// …) and this one only to set WSOptions in a composite literal or to
// inspect a FrameError or a capture. The in-process adapters
// (adapters/handler, adapters/composable) do not use it, so a test of an
// in-process agent compiles no WebSocket library.
//
// # Hostile agents
//
// The agent under test may be misbehaving, so what a Conn holds of it is
// bounded and what it writes is scrubbed:
//
//   - Memory: the receive queue by WSOptions.MaxQueueBytes, each frame by
//     WSOptions.MaxFrameBytes, and the protocols' bookkeeping by
//     MaxPendingMarks, MaxResponseCalls and MaxLoggedOnce; past a bound
//     the connection ends with a *voicetest.LimitError naming it. Sample
//     rates and formats an agent names are checked against what its
//     protocol allows (StandardRates, CheckRate, *FormatError), since audio
//     at a tiny claimed rate is blown up when resampled.
//   - Secrets: every Conn scrubs with one voicetest/scrub.Scrubber
//     (WSOptions.Scrub, or its own), which learns the credentials of the
//     environment (variables named like them, such as OPENAI_API_KEY), the
//     credential headers, the URL's userinfo password and credential query
//     parameters, and the credential members of the JSON frames sent; the
//     capture, the log,
//     errors (ScrubError) and the text of the events returned to the
//     runner (and so the transcript, timeline, artifacts and golden files)
//     have them blanked, also where the agent echoes them.
package wire

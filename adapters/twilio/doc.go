// Package twilio reaches a bot that serves Twilio Media Streams (the
// WebSocket that a <Connect><Stream> TwiML verb opens), as the agent under
// test: voicetest plays Twilio's side of the phone call, in µ-law 8 kHz
// media frames, one every 20 ms for the whole call as a phone line sends
// them (Pacing RealTime, the default), or with the caller's audio sent as
// soon as it is given and nothing between utterances (Fast); see New and
// Agent. To call an agent at a real phone number through Twilio, use
// adapters/twiliophone.
package twilio

// Package summarytest holds a test binary for voicetest's own tests of the
// suite summary (voicetest.Main). Its tests run scenarios only when
// VOICETEST_SUMMARY_CHILD=1, as the summary test sets when it runs them in
// a subprocess; otherwise they skip. It has no API.
package summarytest

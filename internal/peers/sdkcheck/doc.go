// Package sdkcheck holds the conformance tests of voicetest's loopback test
// doubles (internal/peers): each drives a double with the vendor's own
// client SDK from npm, at the versions package.json pins, so that a
// misunderstanding of a protocol shared by a double and voicetest's
// adapters cannot pass unnoticed.
//
// The tests run the SDKs under Node.js (scripts *.mjs) or, for the browser
// SDKs, in headless Chromium (pages *.html); they skip with the install
// command when Node.js or the packages are absent, and fail instead when
// VOICETEST_SDKCHECK_REQUIRED=1, as in CI (.ci/run installs the packages
// with npm ci from package-lock.json). The package has no API; it exists
// for its tests.
package sdkcheck

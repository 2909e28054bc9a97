package voicetest_test

import (
	"fmt"
	"path/filepath"

	"github.com/voicetest-go/voicetest/voicetest"
)

func ExampleTestDataDir() {
	dir, err := voicetest.TestDataDir("testdata/voicetest/cassettes", "TestBooking/party_of_two", "")
	if err != nil {
		panic(err)
	}
	fmt.Println(filepath.ToSlash(dir))
	// Output: testdata/voicetest/cassettes/TestBooking/party_of_two
}

package voicetest

// TestDataDir returns the directory under root that belongs to the test
// named testName (t.Name()) and, when it is not "" and differs from the
// test's name, to the scenario: one directory per element of the test's
// name (a subtest is a subdirectory), each made a file name that is the
// same on every system and cannot leave root, exactly as Scenario names
// the directories of golden files. voicetest/cassette keeps each test's
// cassette there. A test with no name is an error.
func TestDataDir(root, testName, scenario string) (string, error) {
	return goldenDir(root, testName, scenario)
}

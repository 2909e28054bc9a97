package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
)

// cassetteIndex is the name of a cassette's index (cassette.IndexFile),
// and cassetteBody matches its audio bodies.
const cassetteIndex = "cassette.json"

var cassetteBody = regexp.MustCompile(`^c[0-9]+-t[0-9]+\.[0-9a-f]{12}\.wav$`)

// unusedCassetteFiles lists the files of a cassettes directory that no
// test needs: the index of every cassette no test used, with the bodies
// beside it, and the bodies of a used cassette that its index does not
// name (left by a recording killed between its bodies and its index).
// Indexes go before their bodies, so an interrupted prune leaves orphan
// bodies, pruned next time, rather than an index without its bodies.
// Other files are left alone.
func unusedCassetteFiles(root string, used map[string]bool) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		ents, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		var bodies []string
		hasIndex := false
		for _, e := range ents {
			switch {
			case e.IsDir():
			case e.Name() == cassetteIndex:
				hasIndex = true
			case cassetteBody.MatchString(e.Name()):
				bodies = append(bodies, filepath.Join(path, e.Name()))
			}
		}
		index := filepath.Join(path, cassetteIndex)
		keep := map[string]bool{}
		switch {
		case hasIndex && !used[index]:
			out = append(out, index)
		case hasIndex:
			names, err := cassetteBodies(index)
			if err != nil {
				return err
			}
			for _, n := range names {
				keep[filepath.Join(path, n)] = true
			}
		}
		slices.Sort(bodies)
		for _, b := range bodies {
			if !keep[b] {
				out = append(out, b)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading cassettes directory %s: %w", root, err)
	}
	return out, nil
}

// cassetteBodies returns the body files a cassette index names.
func cassetteBodies(index string) ([]string, error) {
	raw, err := os.ReadFile(index)
	if err != nil {
		return nil, err
	}
	var ix struct {
		Conversations []struct {
			Turns []struct {
				AgentAudio *struct{ File string } `json:"agent_audio"`
			} `json:"turns"`
		} `json:"conversations"`
	}
	if err := json.Unmarshal(raw, &ix); err != nil {
		// A used cassette that does not parse failed its test, and a
		// failed package is never pruned; keep its bodies regardless.
		return nil, fmt.Errorf("cassette %s does not parse: %w", index, err)
	}
	var names []string
	for _, c := range ix.Conversations {
		for _, t := range c.Turns {
			if t.AgentAudio != nil {
				names = append(names, filepath.Base(t.AgentAudio.File))
			}
		}
	}
	return names, nil
}

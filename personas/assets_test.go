package personas

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/pcm"
)

func TestStreetTalkersAsset(t *testing.T) {
	t.Parallel()
	talkers, err := streetTalkers()
	require.NoError(t, err)
	require.Len(t, talkers, streetTalkerCount)
	for i, c := range talkers {
		assert.Equal(t, pcm.Rate8k, c.Rate)
		assert.Equal(t, streetTalkerSamples, c.Len())
		level := pcm.DBFS(pcm.RMS(c))
		t.Logf("talker %d: %.1f dBFS RMS", i, level)
		assert.Greater(t, level, -35.0, "talker %d is speech, not silence", i)
		assert.Less(t, level, -3.0)
		for j := range i {
			assert.False(t, slices.Equal(c.Samples, talkers[j].Samples), "talkers %d and %d differ", j, i)
		}
	}

	// Regenerate with the commands of assets/README.md when the tools are
	// here: the same length, and each talker's level within 1 dB.
	for _, tool := range []string{"flite", "sox"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (Debian package %s): not regenerating the asset", tool, tool)
		}
	}
	dir := t.TempDir()
	// assets/README.md's commands; the four voices are synthesised at
	// once (each wait fails the script if its voice failed).
	script := `set -e
talker() { flite -voice $1 -t "$2" -o $1.wav && sox $1.wav -r 8000 -c 1 -b 16 -e signed $1.8k.wav trim 0.15 1.5; }
talker slt "I told him we'd meet at the station around six, but the train was late again." & slt=$!
talker kal "Can you grab some coffee on the way, the place on the corner is open." & kal=$!
talker awb "No, no, the other one, the blue one next to the window, that one." & awb=$!
talker rms "Honestly it was the best concert I have been to in years, you should come." & rms=$!
wait $slt; wait $kal; wait $awb; wait $rms
sox slt.8k.wav kal.8k.wav awb.8k.wav rms.8k.wav -t ul -r 8000 -c 1 babble.ulaw norm -3
`
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	fresh, err := os.ReadFile(filepath.Join(dir, "babble.ulaw"))
	require.NoError(t, err)
	require.Len(t, fresh, len(babbleULaw))
	all := pcm.MulawToChunk(fresh)
	for i, c := range talkers {
		again := pcm.Chunk{Rate: all.Rate, Samples: all.Samples[i*streetTalkerSamples : (i+1)*streetTalkerSamples]}
		assert.InDelta(t, pcm.DBFS(pcm.RMS(c)), pcm.DBFS(pcm.RMS(again)), 1.0, "talker %d", i)
	}
}

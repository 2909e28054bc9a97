#!/bin/sh
# Regenerates the DTMF and VAD test fixtures of package pcm into the current
# directory (or into $1). Needs sox, ffmpeg and flite (Debian packages sox,
# ffmpeg, flite). TestFixturesRegenerate in dtmf_vad_fixtures_test.go runs
# this script in a temporary directory when the tools are installed and checks
# that the output matches the committed files.
#
# All fixtures are raw signed 16-bit little-endian mono PCM (.s16).
#
#   dtmf_sox8k.s16        sox-made keys 0123456789*#ABCD at 8 kHz, each 100 ms
#                         of tone then 100 ms of silence. sox averages the two
#                         full-scale (-3 dBFS) sines: each tone is -9 dBFS.
#   dtmf_sox8k_mulaw.s16  the same keys with 60 ms tones and 60 ms gaps, sent
#                         through G.711 µ-law: encoded by ffmpeg, decoded by
#                         sox (ffmpeg and sox decode all 256 codes to the same
#                         values; starting a second ffmpeg costs ~0.3 s of CPU).
#   vad_speech16k.s16     flite voice slt at 16 kHz saying "Please hold while
#                         I check your account." (2.53 s).
set -eu
cd "${1:-.}"

# Keys in order 0 1 2 3 4 5 6 7 8 9 * # A B C D as "low high" Hz (ITU-T Q.23).
keys="941:1336 697:1209 697:1336 697:1477 770:1209 770:1336 770:1477 852:1209
852:1336 852:1477 941:1209 941:1477 697:1633 770:1633 852:1633 941:1633"

tones() { # tones SECONDS: all keys, each SECONDS of tone then SECONDS of silence
	for k in $keys; do
		sox -n -r 8000 -c 1 -b 16 -e signed -L -t raw -D - \
			synth "$1" sine "${k%:*}" sine "${k#*:}" pad 0 "$1"
	done
}

tones 0.1 >dtmf_sox8k.s16

tones 0.06 >dtmf_mulaw_in.s16
ffmpeg -nostdin -loglevel error -f s16le -ar 8000 -ac 1 -i dtmf_mulaw_in.s16 -f mulaw - |
	sox -D -t raw -r 8000 -c 1 -e mu-law -b 8 - -t raw -r 8000 -c 1 -b 16 -e signed -L dtmf_sox8k_mulaw.s16
rm dtmf_mulaw_in.s16

flite -voice slt -t "Please hold while I check your account." -o vad_speech_tmp.wav
sox vad_speech_tmp.wav -r 16000 -c 1 -b 16 -e signed -L -t raw vad_speech16k.s16
rm vad_speech_tmp.wav

#!/bin/sh
# Regenerates the reference fixtures of package pcm (issue 20) into the
# directory of this script, or into $1. Needs go, ffmpeg, sox and flite
# (Debian packages golang or Go from go.dev, ffmpeg, sox, flite); awk is
# POSIX. TestReferenceFixturesRegenerate runs it in a temporary directory
# when the tools are installed and checks that it reproduces the committed
# files. README.md describes every file.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:-$here}" && cd "${1:-$here}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "$@"; }
# sox: -D no dither, -R repeatable random numbers (the pink noise).
sx() { sox -D -R "$@"; }
raw16() { echo -t raw -e signed -b 16 -L; }

# Raw inputs with exact values, written by a Go program (gen/main.go).
(cd "$here" && go run ./gen "$tmp")

# ffmpeg costs about 0.3 s of CPU to start (it loads some 200 libraries),
# far more than these conversions: one run writes every WAV file below
# (sections 1, 2 and 5) and a second run, at the end of section 4, reads
# them back and measures section 4's levels, each output mapped from its
# own input (-map N:a), as separate runs would do.

# --- 5: a stereo call recording: agent on the left, caller on the right ---
# G.711 µ-law at 8 kHz, as call centres record; ffmpeg's left channel, right
# channel and downmix (-ac 1), as 16-bit (in the runs below).
flite -voice kal -t "Chez Go, how can I help?" -o "$tmp/agent.wav"
flite -voice slt -t "A table for two, please." -o "$tmp/caller.wav"
sx "$tmp/agent.wav" -r 8000 "$tmp/agent8k.wav" pad 0 1.2 rate -v
sx "$tmp/caller.wav" -r 8000 "$tmp/caller8k.wav" pad 1.0 0 rate -v
sx -M "$tmp/agent8k.wav" "$tmp/caller8k.wav" -r 8000 "$tmp/call.wav" trim 0 2.4

# --- 1 and 2: rounding of float and 24-bit samples to 16 bits -------------
# Float mono, as ffmpeg writes it, and ffmpeg's own 16-bit conversion of it.
# 24-bit stereo, ffmpeg's downmix to 16-bit mono (-ac 1), and each channel
# to 16 bits through float (aformat=flt: ffmpeg's own direct 24-to-16-bit
# conversion truncates instead of rounding). 24-bit mono, to 16 bits
# through float.
ff -f f32le -ar 8000 -ac 1 -i "$tmp/f32_mono.f32le" \
	-f s24le -ar 44100 -ac 2 -i "$tmp/s24_stereo.s24le" \
	-f s24le -ar 16000 -ac 1 -i "$tmp/s24_mono.s24le" \
	-i "$tmp/call.wav" \
	-map 0:a -c:a pcm_f32le -fflags +bitexact "$out/f32_mono.wav" \
	-map 1:a -c:a pcm_s24le -fflags +bitexact "$out/s24_stereo.wav" \
	-map 2:a -c:a pcm_s24le -fflags +bitexact "$out/s24_mono.wav" \
	-map 3:a -c:a pcm_mulaw -fflags +bitexact "$out/call_8k_stereo_mulaw.wav"

# --- 3: the resampler's pass and stop band against sox's rate -v ----------
# Tone segments of 0.15 s at -6 dBFS, at 0.5, 0.8, 0.875, 0.9 (pass band),
# 1.05 and 1.25 (stop band) of the output's Nyquist frequency: first those
# for 16 kHz output, then those for 8 kHz.
tones() { # tones RATE FREQ...: the segments at RATE, raw s16le on stdout
	r=$1
	shift
	# One sox for all segments: effect chains separated by ":" run one
	# after the other into the same output, each as a sox of its own
	# would (byte for byte; a sox start costs more than a segment).
	chains=
	for f in "$@"; do
		chains="$chains${chains:+ : }synth 0.15 sine $f vol 0.5"
	done
	sx -n -r "$r" -c 1 $(raw16) - $chains
}
tones 24000 4000 6400 7000 7200 8400 10000 2000 3200 3500 3600 4200 5000 >"$out/tones_24k.s16"
sx $(raw16) -r 24000 -c 1 "$out/tones_24k.s16" $(raw16) -r 16000 "$out/tones_24k.sox16k.s16" rate -v
sx $(raw16) -r 24000 -c 1 "$out/tones_24k.s16" $(raw16) -r 8000 "$out/tones_24k.sox8k.s16" rate -v
# Upsampling: tones at 8 kHz (0.5, 0.8, 0.875 and 0.9 of 4 kHz) to 24 kHz.
tones 8000 2000 3200 3500 3600 >"$out/tones_8k.s16"
sx $(raw16) -r 8000 -c 1 "$out/tones_8k.s16" $(raw16) -r 24000 "$out/tones_8k.sox24k.s16" rate -v

# --- 4: speech in pink noise at 15 dB SNR, and where the speech is --------
# Two utterances 0.8 s apart, with 0.6 s before and after, at 8 kHz. The
# first trails off as people do: flite's trailing silence is trimmed and
# its last 0.4 s fades out (sox's logarithmic fade, about -100 to -250 dB/s);
# the second ends as flite ends it, abruptly.
flite -voice slt -t "Thank you for calling. How can I help you today?" -o "$tmp/u1.wav"
flite -voice slt -t "Your table for two is booked for seven." -o "$tmp/u2.wav"
sx "$tmp/u1.wav" "$tmp/u1t.wav" reverse silence 1 0.01 -60d reverse
sx "$tmp/u1t.wav" "$tmp/u1f.wav" fade l 0 -0 0.4
sx -n -r 16000 -c 1 -b 16 -e signed "$tmp/gap.wav" trim 0 0.6
sx -n -r 16000 -c 1 -b 16 -e signed "$tmp/pause.wav" trim 0 0.8
sx "$tmp/gap.wav" "$tmp/u1f.wav" "$tmp/pause.wav" "$tmp/u2.wav" "$tmp/gap.wav" -r 8000 "$tmp/clean.wav" rate -v
sx "$tmp/u1f.wav" "$tmp/u2.wav" -r 8000 "$tmp/speech.wav" rate -v
len=$(soxi -D "$tmp/clean.wav")
sx -n -r 8000 -c 1 -b 16 -e signed "$tmp/noise.wav" synth "$len" pinknoise
rms() { sox "$1" -n stat 2>&1 | awk '/RMS +amplitude/ {print $3}'; }
# Noise power 15 dB below the speech's (the RMS of the two utterances as
# flite wrote them).
gain=$(awk -v s="$(rms "$tmp/speech.wav")" -v n="$(rms "$tmp/noise.wav")" 'BEGIN { printf "%.6f", s / n / 10^(15/20) }')
sx "$tmp/noise.wav" "$tmp/noise15.wav" vol "$gain"
sx -m -v 1 "$tmp/clean.wav" -v 1 "$tmp/noise15.wav" $(raw16) "$out/speech_pink15_8k.s16"
sx -n -r 8000 -c 1 -b 16 -e signed "$tmp/wnoise.wav" synth "$len" whitenoise
wgain=$(awk -v s="$(rms "$tmp/speech.wav")" -v n="$(rms "$tmp/wnoise.wav")" 'BEGIN { printf "%.6f", s / n / 10^(15/20) }')
sx "$tmp/wnoise.wav" "$tmp/wnoise15.wav" vol "$wgain"
sx -m -v 1 "$tmp/clean.wav" -v 1 "$tmp/wnoise15.wav" $(raw16) "$out/speech_white15_8k.s16"
# Reference segments: ffmpeg measures the clean speech's RMS level in 10 ms
# frames, and the noise's over the whole file, both through a 100 Hz
# high-pass (the VAD ignores rumble below 100 Hz, where pink noise has much
# of its power and speech has little); speech runs from the start of the
# first to the end of the last frame whose level is at least the noise's,
# and a gap of more than 300 ms separates two segments.
# The clean speech's frame levels are the same for both noises. One ffmpeg
# run (ffmpeg costs ~0.3 s of CPU to start) measures them and each noise's
# level, and makes the 16-bit conversions of sections 1, 2 and 5 (inputs 0
# to 3): each filter chain and each output on its own input, as separate
# runs would. The levels go to its standard output, the noises' statistics
# to its log, under each astats instance's name.
s16="-f s16le -c:a pcm_s16le"
ffmpeg -nostdin -hide_banner -y -i "$out/f32_mono.wav" -i "$out/s24_stereo.wav" -i "$out/s24_mono.wav" -i "$out/call_8k_stereo_mulaw.wav" \
	-i "$tmp/clean.wav" -i "$tmp/noise15.wav" -i "$tmp/wnoise15.wav" \
	-filter_complex "[4:a]highpass=f=100,asetnsamples=n=80:p=0,astats=metadata=1:reset=1:measure_perchannel=none,ametadata=print:key=lavfi.astats.Overall.RMS_level:file=-[levels];[5:a]highpass=f=100,astats@pink=measure_perchannel=none[pink];[6:a]highpass=f=100,astats@white=measure_perchannel=none[white]" \
	-map 0:a $s16 "$out/f32_mono.ffmpeg.s16" \
	-map 1:a -ac 1 $s16 "$out/s24_stereo.ffmpeg-ac1.s16" \
	-map 1:a -af aformat=sample_fmts=flt $s16 "$out/s24_stereo.ffmpeg-flt.s16" \
	-map 2:a -af aformat=sample_fmts=flt $s16 "$out/s24_mono.ffmpeg-flt.s16" \
	-map 3:a -af "pan=mono|c0=c0" $s16 "$out/call_8k_stereo_mulaw.left.s16" \
	-map 3:a -af "pan=mono|c0=c1" $s16 "$out/call_8k_stereo_mulaw.right.s16" \
	-map 3:a -ac 1 $s16 "$out/call_8k_stereo_mulaw.ffmpeg-ac1.s16" \
	-map "[levels]" -f null - -map "[pink]" -f null - -map "[white]" -f null - \
	>"$tmp/clean.levels" 2>"$tmp/noise.log"
segments() { # segments NOISE OUT: the reference segments against the noise measured by astats@NOISE
	noise_db=$(awk -v tag="[astats@$1 " 'index($0, tag) == 1 && /RMS level dB:/ {print $NF}' "$tmp/noise.log")
	{
		echo "# start_ms end_ms of each segment; noise RMS level $noise_db dBFS"
		awk -v noise="$noise_db" -v frame=10 '
			/^frame:/ { n = substr($1, 7) + 0 }
			/RMS_level=/ {
				split($0, kv, "=")
				if (kv[2] != "-inf" && kv[2] + 0 >= noise + 0) {
					t = n * frame
					if (have && t - last > 300) { printf "%d %d\n", start, last; have = 0 }
					if (!have) { start = t; have = 1 }
					last = t + frame
				}
			}
			END { if (have) printf "%d %d\n", start, last }' "$tmp/clean.levels"
	} >"$2"
}
segments pink "$out/speech_pink15_8k.segments"
segments white "$out/speech_white15_8k.segments"

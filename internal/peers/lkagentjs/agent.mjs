// A voice agent built on LiveKit Agents for Node (@livekit/agents, pinned in
// package.json), the way its documentation builds one: an AgentSession with
// Silero VAD and the OpenAI plugin's STT (the transcriptions endpoint), LLM
// (streamed chat completions) and TTS (/v1/audio/speech), and one function
// tool. Every OpenAI request goes to the loopback OpenAI-compatible test
// double whose base URL is in OPENAI_BASE_URL; nothing leaves 127.0.0.1.
//
// Run by lkagentjs.go as `node agent.mjs start`, configured by the
// environment:
//
//   LIVEKIT_URL, LIVEKIT_API_KEY, LIVEKIT_API_SECRET  the server (read by the framework)
//   LKAGENTJS_AGENT_NAME  the name the worker registers for explicit dispatch
//   LKAGENTJS_HTTP_PORT   the worker's health-check port on 127.0.0.1
//   OPENAI_BASE_URL, OPENAI_API_KEY  the OpenAI-compatible server
//
// The worker reports a load of 0: on a small machine its CPU load would
// otherwise pass the threshold and the server would dispatch nothing.
import { cli, defineAgent, llm, log, ServerOptions, voice } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import * as silero from '@livekit/agents-plugin-silero';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const baseURL = process.env.OPENAI_BASE_URL;
const apiKey = process.env.OPENAI_API_KEY;

// The framework starts a process of its own for its local end-of-turn
// model (lk_eot_audio, ~3 s of CPU loading it) whenever the native
// binding of @livekit/local-inference loads, whatever the session's turn
// detection (agents-js 1.9.0 dist/worker.js:39-53,
// maybeRegisterLocalEotRunner, and dist/ipc/inference_proc_executor.js:41-44,
// createIfNeeded: no registered runner, no process). It has no option to
// turn that off, and falls back cleanly when the binding does not load
// (dist/inference/_warmup.js:6-19: "local VAD/EOT paths disabled"; the
// worker logs "local audio EOT disabled ... other turn detection modes are
// unaffected"). So the binding's module is made not to load here: its
// entry in the CommonJS module cache (require.cache) throws when its
// exports are read, as a require of a binding that fails does.
{
  const agentsRequire = createRequire(import.meta.resolve('@livekit/agents'));
  const path = agentsRequire.resolve('@livekit/local-inference');
  agentsRequire.cache[path] = {
    id: path,
    filename: path,
    loaded: true,
    children: [],
    get exports() {
      throw new Error('lkagentjs: the local end-of-turn model is not used (turnDetection "vad")');
    },
  };
}

export default defineAgent({
  prewarm: async (proc) => {
    // The framework's default end of speech, 550 ms of silence
    // (@livekit/agents-plugin-silero dist/vad.js:14). 300 ms (until lk9)
    // ended a caller's line at a gap that a starved sender leaves in its
    // track under load: the line reached the STT as two uploads, the
    // test's transcriptions went one line ahead, and the second half cut
    // the reply short (TestNodeAgent's tool turn said "You have", lk8:
    // 2 in 23 runs at load 15-38; a 400 ms gap put in "check my booking"
    // failed the test at 300 ms and passes at 550).
    proc.userData.vad = await silero.VAD.load({ minSilenceDuration: 550 });
    // lkagentjs.go waits for this line (Worker.Ready): a job dispatched
    // from now on starts in this process at once.
    log().info('lkagentjs: job process prewarmed');
  },
  entry: async (ctx) => {
    const agent = new voice.Agent({
      instructions: 'You are the front desk of a small restaurant. Keep answers short.',
      tools: {
        lookup_booking: llm.tool({
          description: 'Look up a table booking by the name it was made under.',
          parameters: z.object({ name: z.string().describe('The name of the booking') }),
          execute: async ({ name }) => ({ name, table: 4, time: '19:00' }),
        }),
      },
    });
    const session = new voice.AgentSession({
      vad: ctx.proc.userData.vad,
      stt: new openai.STT({ baseURL, apiKey, useRealtime: false, model: 'whisper-1', language: 'en' }),
      llm: new openai.LLM({ baseURL, apiKey, model: 'gpt-4o-mini' }),
      tts: new openai.TTS({ baseURL, apiKey, model: 'tts-1', voice: 'alloy' }),
      aecWarmupDuration: null,
      turnHandling: {
        turnDetection: 'vad',
        endpointing: { mode: 'fixed', minDelay: 300 },
        interruption: { mode: 'vad', minDuration: 300, resumeFalseInterruption: false },
      },
    });
    // The caller's audio reaches the session at 16 kHz, the rate Silero
    // VAD runs at and plenty for the transcriptions endpoint: the room's
    // default, 24 kHz, only made the VAD resample it again, and the
    // framework carry half as many samples again through its streams.
    await session.start({ agent, room: ctx.room, inputOptions: { audioSampleRate: 16000 } });
    await ctx.connect();
    session.say('Front desk, hello.');
  },
});

cli.runApp(
  new ServerOptions({
    agent: fileURLToPath(import.meta.url),
    agentName: process.env.LKAGENTJS_AGENT_NAME,
    host: '127.0.0.1',
    port: Number(process.env.LKAGENTJS_HTTP_PORT),
    loadFunc: async () => 0,
    numIdleProcesses: 1,
    // The framework kills a job process whose prewarm (loading the
    // Silero model) takes more than this, 10 s by default, and starts
    // another: on a loaded 2-core machine every prewarm took longer, and
    // the worker restarted them until the test's wait ran out.
    initializeProcessTimeout: 60_000,
  }),
);

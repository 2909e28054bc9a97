// The frame of a Node conformance script: run main, then print the report
// as the last line of standard output and exit 1 if anything failed to
// run (an uncaught error of the SDK included) or ms passed first.

export function runScript(r, main, ms = 60000) {
  const finish = (code) => {
    clearTimeout(deadline);
    process.stdout.write(r.json() + '\n');
    process.exit(code);
  };
  const deadline = setTimeout(() => {
    r.fail(`the script ran out of time (${ms / 1000} s)`);
    finish(1);
  }, ms);
  process.on('uncaughtException', (e) => {
    r.fail(`the SDK threw: ${e?.stack ?? e}`);
    finish(1);
  });
  main().then(
    () => finish(0),
    (e) => {
      r.fail(`script: ${e?.stack ?? e}`);
      finish(1);
    },
  );
}

// arena's V8 profiler. NODE_OPTIONS=--require loads it into every Node process of a contender
// (a cluster's workers too) when a run takes profiles: node refuses --cpu-prof in NODE_OPTIONS,
// so this starts the same V8 CPU profiler through node:inspector, on the first SIGUSR2 (the
// load's start), and stops it on the second (its end), writing <pid>.cpuprofile, the format
// --cpu-prof writes, into ARENA_V8_PROFILE_DIR. A process that exits while profiling writes
// what it has.
'use strict';
const dir = process.env.ARENA_V8_PROFILE_DIR;
if (dir) {
  const inspector = require('node:inspector');
  const fs = require('node:fs');
  const path = require('node:path');
  const session = new inspector.Session();
  session.connect();
  let running = false;
  const stop = () => {
    if (!running) return;
    running = false;
    // An in-process session answers synchronously, so this also works in an 'exit' handler.
    session.post('Profiler.stop', (err, res) => {
      if (err) {
        process.stderr.write(`arena profiler: ${err.message}\n`);
        return;
      }
      fs.writeFileSync(path.join(dir, `${process.pid}.cpuprofile`), JSON.stringify(res.profile));
    });
  };
  process.on('SIGUSR2', () => {
    if (running) {
      stop();
      return;
    }
    session.post('Profiler.enable');
    session.post('Profiler.setSamplingInterval', { interval: 10000 }); // µs: 100 Hz, as JFR and pprof sample here
    session.post('Profiler.start', (err) => { running = !err; });
  });
  process.on('exit', stop);
}

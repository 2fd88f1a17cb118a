// temporary: CPU µs per request of file vs hello servers, alternating rounds
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import autocannon from 'autocannon';
const here = new URL('.', import.meta.url).pathname;
const ROUNDS = Number(process.env.R ?? 4), DUR = Number(process.env.D ?? 3);
function start(mode, extra = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [here + 'server.mjs', mode, ...extra], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.once('data', (d) => resolve({ child, port: Number(String(d).trim()) }));
    child.once('exit', (c) => reject(new Error('exit ' + c)));
  });
}
const cpu = (pid) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) * 1e4; };
async function load(url, pid) {
  const b = cpu(pid);
  const r = await autocannon({ url, connections: 50, duration: DUR });
  if (r.non2xx || r.errors) throw new Error(url + ' non2xx ' + r.non2xx + ' errors ' + r.errors);
  return { rps: r.requests.average, cpu: (cpu(pid) - b) / r.requests.total };
}
const f = await start('file'), h = await start('hello');
const fu = `https://127.0.0.1:${f.port}/bench/app.conf`, hu = `https://127.0.0.1:${h.port}/hello`;
await autocannon({ url: fu, connections: 10, duration: 1 }); await autocannon({ url: hu, connections: 10, duration: 1 });
const rows = [];
for (let i = 0; i < ROUNDS; i++) { const hh = await load(hu, h.child.pid); const ff = await load(fu, f.child.pid); rows.push({ ratio: ff.rps / hh.rps, cpuRatio: hh.cpu / ff.cpu, fcpu: ff.cpu, hcpu: hh.cpu }); }
f.child.kill(); h.child.kill();
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.log(process.env.LABEL ?? '', 'rps ratio', med(rows.map((r) => r.ratio)).toFixed(2), 'range', Math.min(...rows.map((r) => r.ratio)).toFixed(2), Math.max(...rows.map((r) => r.ratio)).toFixed(2), '| cpu file', med(rows.map((r) => r.fcpu)).toFixed(0), 'hello', med(rows.map((r) => r.hcpu)).toFixed(0), 'cpu ratio', med(rows.map((r) => r.cpuRatio)).toFixed(2), '| load', loadavg()[0].toFixed(1));

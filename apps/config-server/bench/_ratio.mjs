import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
const here = dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.R ?? 4);
function startTarget(mode, extra = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...extra, join(here, 'server.mjs'), mode], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.once('data', (d) => resolve({ child, port: Number(String(d).trim()) }));
    child.once('exit', (code) => reject(new Error(`${mode} exited ${code}`)));
  });
}
import { readFileSync } from 'node:fs';
const cpu = (pid) => { const x = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(x[11]) + Number(x[12])) * 1e4; };
let cur;
const load = async (url) => { const b = cpu(cur.child.pid); const r = await autocannon({ url, connections: 50, duration: 3 }); console.log('  cpu us/req', ((cpu(cur.child.pid) - b) / r.requests.total).toFixed(1)); return r.requests.average; };
const file = await startTarget('file', (process.env.PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROF}`] : []));
const hello = await startTarget('hello');
const fu = `https://127.0.0.1:${file.port}/bench/app.conf`, hu = `https://127.0.0.1:${hello.port}/hello`;
await autocannon({ url: fu, connections: 10, duration: 1 }); await autocannon({ url: hu, connections: 10, duration: 1 });
const r = [];
for (let i = 0; i < ROUNDS; i++) { cur = hello; const h = await load(hu); cur = file; const f = await load(fu); r.push(f / h); console.log(h.toFixed(0), f.toFixed(0), (f / h * 100).toFixed(0) + '%'); }
r.sort(); console.log('median', (r[Math.floor(r.length / 2)] * 100).toFixed(0));
file.child.kill('SIGTERM'); hello.child.kill('SIGTERM');

import express from 'express';

// The reference: a bare express 5 "hello" endpoint, the ceiling of any express service on
// this machine. Listens on PORT.
const app = express();
app.get('/hello', (_req, res) => {
  res.json({ message: 'hello' });
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));

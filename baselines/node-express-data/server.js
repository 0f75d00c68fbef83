// Express's hello world with express.static and Node's built-in fetch: the floor of the
// node-express contenders on /data/{id}.
const path = require('node:path');
const express = require('express');

const port = Number(process.env.PORT);
const app = express();

app.get('/instant', (req, res) => {
  res.type('text/plain').send('INSTANT');
});

app.use('/resources', express.static(path.join(__dirname, 'resources')));

app.get('/data/:id', async (req, res) => {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/resources/data${req.params.id}.json`);
    if (!response.ok) throw new Error(`downstream answered ${response.status}`);
    const data = await response.json();
    res.json(data);
  } catch (err) {
    res.sendStatus(502);
  }
});

app.listen(port, '127.0.0.1');

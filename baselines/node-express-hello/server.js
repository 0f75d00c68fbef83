// Express's hello world, answering /instant and nothing else.
const express = require('express');

const app = express();
app.get('/instant', (req, res) => {
  res.type('text/plain').send('INSTANT');
});
app.listen(Number(process.env.PORT), '127.0.0.1');

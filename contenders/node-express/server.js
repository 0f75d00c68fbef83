'use strict';

// One Node.js process, one event loop: listens on 127.0.0.1:$PORT (or $BIND_ADDRESS:$PORT). All
// but the chat's rooms (chat.js) is the shared server (../_shared/node-express), the very code each
// node-express-cluster worker runs; it takes express, ws and pg from here (see serve.js). /db's
// pool is this process's, of DB_POOL connections.
const path = require('node:path');
const express = require('express');
const { WebSocketServer } = require('ws');
const pg = require('pg');
const { serve } = require('../_shared/node-express/serve.js');
const { attachChat } = require('./chat.js');

serve({ express, WebSocketServer, pg }, {
  label: 'node-express',
  resources: path.join(__dirname, 'resources'),
  attachChat,
});

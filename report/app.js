// Draws every .arena-chart from the #arena-data blob. Each chart is drawn on its own so
// that one failure cannot hide the others; body's data-charts-expected and
// data-charts-drawn, with #arena-errors, let a headless browser check the result.
(function () {
  'use strict';
  var body = document.body;
  var report = window.arenaError;
  var elements = Array.prototype.slice.call(document.querySelectorAll('.arena-chart'));
  body.dataset.chartsExpected = String(elements.length);
  body.dataset.chartsDrawn = '0';

  // One colour per contender, in the order of the level's contenders, on every chart.
  var PALETTE = ['#2f6db5', '#d9822b', '#2e9e5b', '#c0392b', '#7d5ba6', '#8c6d3f', '#c4559b', '#56606b'];
  var PERCENTILES = ['p50', 'p90', 'p99', 'p99.9', 'max'];
  var PERCENTILE_COLOURS = ['#c6dbef', '#9ecae1', '#4292c6', '#2171b5', '#08306b'];

  // Mirrors fmtMs in view.go: three significant digits, seconds from 10 s up.
  function sig3(v) {
    if (v >= 100) return v.toFixed(0);
    if (v >= 10) return v.toFixed(1);
    if (v >= 1) return v.toFixed(2);
    return String(Number(v.toPrecision(3)));
  }
  function fmtMs(v) {
    if (v == null || isNaN(v)) return '—';
    if (v >= 10000) return sig3(v / 1000) + ' s';
    return sig3(v) + ' ms';
  }
  // Axis ticks of a log scale fall on powers of ten: "1 ms", "100 ms", "10 s".
  function fmtAxisMs(v) {
    return v >= 1000 ? Number((v / 1000).toPrecision(3)) + ' s' : Number(v.toPrecision(3)) + ' ms';
  }
  // A formatter's string is HTML to echarts: every name in it is escaped first.
  function escapeHTML(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }
  function fmtNum(v) {
    if (v == null || isNaN(v)) return '—';
    return Math.abs(v) >= 100 ? v.toFixed(0) : String(Number(v.toPrecision(3)));
  }

  function base(yName, yType, format) {
    var log = yType === 'log';
    return {
      animation: false,
      color: PALETTE,
      textStyle: { fontFamily: 'system-ui, sans-serif' },
      // The legend sits below the plot: above it, it collides with the axis name.
      legend: { bottom: 0, type: 'scroll' },
      grid: { left: 12, right: 20, top: 30, bottom: 32, containLabel: true },
      tooltip: { trigger: 'axis', valueFormatter: format },
      yAxis: {
        type: yType, name: yName, nameTextStyle: { align: 'left' },
        axisLabel: { formatter: log ? fmtAxisMs : format },
        // A log axis starts half a decade or more below the least value, so that a
        // bar just above a power of ten still shows.
        min: log ? function (e) { return e.min > 0 ? Math.pow(10, Math.floor(Math.log10(e.min) - 0.5)) : undefined; } : undefined,
        splitLine: { lineStyle: { color: '#eef1f4' } }
      }
    };
  }

  function timeAxis() {
    return { type: 'value', name: 's', min: 0, axisLabel: { formatter: '{value}' }, splitLine: { show: false } };
  }

  // lines draws series of [x, y] points, each in its contender's colour (s.c) and dash;
  // dashed is the default dash of those that name none.
  function lines(series, dashed, symbols) {
    return (series || []).map(function (s, i) {
      var colour = PALETTE[(s.c != null ? s.c : i) % PALETTE.length];
      var dash = s.dash || (dashed ? 'dashed' : 'solid');
      return {
        type: 'line', name: s.name, data: s.points, showSymbol: !!symbols, symbolSize: 5, connectNulls: false,
        lineStyle: { width: dash === 'solid' ? 2 : 1.5, type: dash === 'dashdot' ? [8, 3, 2, 3] : dash, color: colour },
        itemStyle: { color: colour }
      };
    });
  }

  // withCap draws the memory cap as a line across the chart, when there was one.
  function withCap(series, cap) {
    if (!cap || !series.length) return series;
    series[0].markLine = { silent: true, symbol: 'none', lineStyle: { color: '#b3261e', type: 'dashed' },
      label: { formatter: 'cap ' + fmtNum(cap) + ' MB', position: 'insideEndTop' }, data: [{ yAxis: cap }] };
    return series;
  }

  // Bars of a series sit side by side in a category: these match echarts' layout, so that
  // the whiskers land on their bars.
  var BAR_GAP = 0.1, CATEGORY_GAP = 0.3;

  // errorBars draws whiskers from lo to hi over each bar that has them.
  function errorBars(d) {
    var n = d.series.length, items = [];
    d.series.forEach(function (s, si) {
      if (!s.lo || !s.hi) return;
      s.values.forEach(function (v, ci) {
        var lo = s.lo[ci], hi = s.hi[ci];
        if (v != null && lo != null && hi != null && hi > lo) items.push([ci, lo, hi, si]);
      });
    });
    if (!items.length) return null;
    return {
      type: 'custom', name: 'min–max', silent: true, z: 10, data: items, encode: { x: 0, y: [1, 2] },
      tooltip: { show: false },
      renderItem: function (params, api) {
        var ci = api.value(0), si = api.value(3), lo = api.value(1), hi = api.value(2);
        var band = api.size([1, 0], [ci, lo])[0];
        var group = band * (1 - CATEGORY_GAP), w = group / (n + BAR_GAP * (n - 1));
        var x = api.coord([ci, lo])[0] - group / 2 + si * w * (1 + BAR_GAP) + w / 2;
        var y1 = api.coord([ci, lo])[1], y2 = api.coord([ci, hi])[1], cap = Math.min(6, w / 3);
        var style = { stroke: '#1f2328', lineWidth: 1.2 };
        return { type: 'group', children: [
          { type: 'line', shape: { x1: x, y1: y1, x2: x, y2: y2 }, style: style },
          { type: 'line', shape: { x1: x - cap, y1: y1, x2: x + cap, y2: y1 }, style: style },
          { type: 'line', shape: { x1: x - cap, y1: y2, x2: x + cap, y2: y2 }, style: style }
        ] };
      }
    };
  }

  var CURVES = {
    latency: ['ms', 'log', fmtMs],
    rps: ['requests/s', 'value', fmtNum],
    cpu: ['% of one core', 'value', fmtNum],
    rss: ['MB', 'value', fmtNum],
    threads: ['threads', 'value', fmtNum]
  };

  function levelOf(el) { return data.levels[Number(el.dataset.level)]; }

  var build = {
    percentiles: function (el) {
      var level = levelOf(el), t = level.tags[el.dataset.tag];
      var o = base('ms', 'log', fmtMs);
      o.color = PERCENTILE_COLOURS;
      o.tooltip.axisPointer = { type: 'shadow' };
      // Every contender named (interval 0), slanted once names would overlap.
      o.xAxis = { type: 'category', data: level.contenders,
        axisLabel: { interval: 0, rotate: level.contenders.length > 3 ? 20 : 0 } };
      o.series = PERCENTILES.map(function (name, i) {
        return { type: 'bar', name: name, data: t.percentiles.map(function (p) { return p ? p[i] : null; }) };
      });
      return o;
    },
    p99: function (el) {
      var o = base('p99, ms', 'log', fmtMs);
      o.xAxis = timeAxis();
      o.series = lines(levelOf(el).tags[el.dataset.tag].p99, false);
      return o;
    },
    cpu: function (el) {
      var level = levelOf(el);
      var o = base('%', 'value', fmtNum);
      o.xAxis = timeAxis();
      o.series = lines(level.lines.cpu, false).concat(lines(level.lines.client_cpu, true), lines(level.lines.downstream_cpu, false), lines(level.lines.database_cpu, false));
      return o;
    },
    rss: function (el) {
      var level = levelOf(el);
      var o = base('MB', 'value', fmtNum);
      o.xAxis = timeAxis();
      o.series = withCap(lines(level.lines.rss, false).concat(lines(level.lines.heap, false), lines(level.lines.downstream_rss, false), lines(level.lines.database_rss, false)), level.cap_mb);
      return o;
    },
    // Memory under slow consumers: a line per contender and level, the cap drawn.
    stream_rss: function () {
      var d = data.stream_rss;
      var o = base('MB', 'value', fmtNum);
      o.xAxis = timeAxis();
      o.series = withCap(lines(d.lines, false), d.cap_mb);
      if (d.cap_mb) o.yAxis.max = function (e) { return Math.max(e.max, d.cap_mb) * 1.05; };
      return o;
    },
    threads: function (el) {
      var o = base('threads', 'value', fmtNum);
      o.xAxis = timeAxis();
      o.series = lines(levelOf(el).lines.threads, false);
      return o;
    },
    // One figure of a group of levels against their X, a line per contender.
    curve: function (el) {
      var c = data.curves[Number(el.dataset.curve)], metric = el.dataset.metric, spec = CURVES[metric];
      var o = base(spec[0], spec[1], spec[2]);
      o.grid.bottom = 54;
      o.xAxis = { type: 'value', name: c.x_name, nameLocation: 'middle', nameGap: 24, min: 0, splitLine: { show: false } };
      o.series = lines(c[metric], false, true);
      return o;
    },
    // A flame graph of one contender's profile, root at the top, drawn as rectangles of a
    // custom series: x is the share of samples, y the depth.
    flame: function (el) {
      var f = levelOf(el).flames[Number(el.dataset.flame)], items = [], depth = 0;
      (function walk(n, x, d) {
        items.push([x, x + n.v, d, n.n, n.v]);
        depth = Math.max(depth, d);
        var cx = x;
        (n.c || []).forEach(function (c) { walk(c, cx, d + 1); cx += c.v; });
      })(f.tree, 0, 0);
      var ROW = 16, total = f.tree.v || 1;
      el.style.height = ((depth + 1) * ROW + 16) + 'px';
      return {
        animation: false,
        textStyle: { fontFamily: 'system-ui, sans-serif' },
        tooltip: { formatter: function (p) {
          var v = p.value;
          return escapeHTML(v[3]) + '<br>' + fmtNum(100 * v[4] / total) + ' % of ' + f.samples + ' samples';
        } },
        grid: { left: 2, right: 2, top: 8, bottom: 8 },
        xAxis: { type: 'value', min: 0, max: total, show: false },
        yAxis: { type: 'value', min: 0, max: depth + 1, inverse: true, show: false },
        series: [{
          type: 'custom', data: items, encode: { x: [0, 1], y: 2, tooltip: 4 },
          renderItem: function (params, api) {
            var a = api.coord([api.value(0), api.value(2)]), b = api.coord([api.value(1), api.value(2) + 1]);
            var w = Math.max(b[0] - a[0] - 0.5, 0.5), name = items[params.dataIndex][3];
            return {
              type: 'rect', shape: { x: a[0], y: a[1], width: w, height: b[1] - a[1] - 1 },
              style: { fill: frameColour(name) },
              textContent: w > 28 ? { style: { text: name, fill: '#1f2328', fontSize: 11, width: w - 4, overflow: 'truncate' } } : undefined,
              textConfig: { position: 'insideLeft' }
            };
          }
        }]
      };
    },
    // A bar per category (contender) per series, with whiskers where given.
    bars: function (el) {
      var d = data.bars[Number(el.dataset.bars)], ms = d.format === 'ms', format = ms ? fmtMs : fmtNum;
      var o = base(d.unit, ms ? 'log' : 'value', format);
      o.tooltip.axisPointer = { type: 'shadow' };
      var unranked = d.unranked || [];
      o.tooltip.formatter = function (params) {
        var lines = [params.length ? escapeHTML(params[0].name) : ''];
        params.forEach(function (p) {
          if (p.seriesType !== 'bar') return;
          var s = d.series[p.seriesIndex], i = p.dataIndex, text = format(p.value);
          if (s.lo && s.hi && s.lo[i] != null && s.hi[i] > s.lo[i]) text += ' (' + format(s.lo[i]) + '–' + format(s.hi[i]) + ')';
          lines.push(p.marker + (d.by_category ? '' : escapeHTML(p.seriesName) + ': ') + text);
        });
        if (params.length && unranked[params[0].dataIndex]) lines.push('⚠ ' + escapeHTML(unranked[params[0].dataIndex]));
        return lines.join('<br>');
      };
      // A contender whose deliveries had faults has no bar beside the honest ones: its label
      // is marked instead, and the tooltip says why.
      o.xAxis = { type: 'category', data: d.categories,
        axisLabel: { interval: 0, rotate: d.categories.length > 3 ? 20 : 0,
          formatter: function (v, i) { return unranked[i] ? v + ' ⚠ faults' : v; } } };
      o.series = d.series.map(function (s) {
        var bar = { type: 'bar', name: s.name, data: s.values, barGap: BAR_GAP * 100 + '%', barCategoryGap: CATEGORY_GAP * 100 + '%' };
        if (d.by_category) bar.itemStyle = { color: function (p) { return PALETTE[p.dataIndex % PALETTE.length]; } };
        return bar;
      });
      if (d.by_category) {
        o.legend = { show: false };
        o.grid.bottom = 8;
      } else {
        o.legend.data = d.series.map(function (s) { return s.name; });
      }
      var whiskers = errorBars(d);
      if (whiskers) o.series.push(whiskers);
      return o;
    }
  };

  // A frame's colour follows its library (Java and Go: the package's first parts; V8: the
  // script's package), so that one stack's layers read alike from graph to graph.
  var FLAME = ['#f2a65a', '#eec170', '#f58549', '#e9c46a', '#f4a259', '#d8a47f', '#f6bd60', '#e76f51', '#c9ada7', '#ffb4a2'];
  function frameColour(name) {
    var key;
    var space = name.indexOf(' ');
    if (space > 0) key = name.slice(space + 1).split('/')[0];
    else {
      var parts = name.split('.');
      key = parts[0].length <= 3 && parts.length > 2 ? parts[0] + '.' + parts[1] : parts[0];
    }
    if (name === 'all') return '#d0d7de';
    var h = 0;
    for (var i = 0; i < key.length; i++) h = (h * 31 + key.charCodeAt(i)) >>> 0;
    return FLAME[h % FLAME.length];
  }

  // The side-by-side of two contenders' top frames (self share, most first), chosen in the
  // level's two selects.
  function topFrames(box) {
    var flames = data.levels[Number(box.dataset.level)].flames || [];
    var a = box.querySelector('.profile-a'), b = box.querySelector('.profile-b');
    if (flames.length === 0) { box.hidden = true; return; }
    flames.forEach(function (f, i) {
      [a, b].forEach(function (sel) {
        var o = document.createElement('option');
        o.value = String(i);
        o.textContent = f.contender;
        sel.appendChild(o);
      });
    });
    // The second contender by default, not the first one's client.
    var second = flames.findIndex(function (f, i) { return i > 0 && !/ · client$/.test(f.contender); });
    b.value = String(second > 0 ? second : Math.min(1, flames.length - 1));
    function cell(tr, text, cls) {
      var td = document.createElement('td');
      td.textContent = text;
      if (cls) td.className = cls;
      tr.appendChild(td);
    }
    function draw() {
      var fa = flames[Number(a.value)], fb = flames[Number(b.value)];
      var head = box.querySelector('thead'), rows = box.querySelector('tbody');
      head.innerHTML = '';
      rows.innerHTML = '';
      var hr = document.createElement('tr');
      ['#', fa.contender + ' (' + fa.tool + ')', 'self', 'total', fb.contender + ' (' + fb.tool + ')', 'self', 'total'].forEach(function (t) {
        var th = document.createElement('th');
        th.textContent = t;
        hr.appendChild(th);
      });
      head.appendChild(hr);
      for (var i = 0; i < Math.max(fa.top.length, fb.top.length); i++) {
        var tr = document.createElement('tr'), x = fa.top[i], y = fb.top[i];
        cell(tr, String(i + 1));
        [x, y].forEach(function (t) {
          cell(tr, t ? t.name : '', 'frame');
          cell(tr, t ? fmtNum(t.self) + ' %' : '', 'num');
          cell(tr, t ? fmtNum(t.total) + ' %' : '', 'num');
        });
        rows.appendChild(tr);
      }
    }
    a.addEventListener('change', draw);
    b.addEventListener('change', draw);
    draw();
  }

  var data;
  try {
    data = JSON.parse(document.getElementById('arena-data').textContent);
  } catch (e) {
    report('chart data: ' + e);
    return;
  }
  if (typeof echarts === 'undefined') {
    report('the chart library did not load');
    return;
  }

  // A chart inside a closed <details> has no size yet: it is drawn at the size its box
  // will have (the .charts grid: columns of 520 px or more, 20 px apart, boxes with 8 px
  // padding and a border), and fitted to its box when the details open.
  function hiddenSize(el) {
    if (el.clientWidth > 0 && el.clientHeight > 0) return null;
    var p = el.parentElement;
    while (p && p.clientWidth === 0) p = p.parentElement;
    var w = p ? p.clientWidth : 960;
    var cols = Math.max(1, Math.floor((w + 20) / 540));
    return {
      width: Math.max(240, Math.floor((w - 20 * (cols - 1)) / cols) - 18),
      height: parseFloat(getComputedStyle(el).height) || 280
    };
  }

  var charts = [];
  elements.forEach(function (el, n) {
    var what = 'chart ' + n + ' (' + el.dataset.kind + (el.dataset.tag ? ' ' + el.dataset.tag : '') + ')';
    try {
      var option = build[el.dataset.kind](el);
      // SVG keeps the drawing in the DOM, where a dump can check it, and prints sharply.
      var size = hiddenSize(el) || {};
      var chart = echarts.init(el, null, { renderer: 'svg', width: size.width, height: size.height });
      chart.setOption(option); // draws synchronously: animation is off
      charts.push(chart);
      body.dataset.chartsDrawn = String(Number(body.dataset.chartsDrawn) + 1);
    } catch (e) {
      report(what + ': ' + (e && e.stack ? e.stack : e));
    }
  });

  Array.prototype.forEach.call(document.querySelectorAll('.profile-compare'), function (box) {
    try {
      topFrames(box);
    } catch (e) {
      report('top frames: ' + (e && e.stack ? e.stack : e));
    }
  });

  function fit(root) {
    Array.prototype.forEach.call(root.querySelectorAll('.arena-chart'), function (el) {
      var c = echarts.getInstanceByDom(el);
      if (c && el.clientWidth > 0) c.resize({ width: 'auto', height: 'auto' });
    });
  }
  function resize() {
    charts.forEach(function (c) { c.resize(); });
  }
  var details = Array.prototype.slice.call(document.querySelectorAll('details'));
  details.forEach(function (d) {
    d.addEventListener('toggle', function () { if (d.open) fit(d); });
  });
  // A link to a level (#level-3) opens its folded detail.
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (!target) return;
    Array.prototype.forEach.call(target.querySelectorAll('details.level-detail'), function (d) { d.open = true; });
  }
  window.addEventListener('hashchange', openTarget);
  openTarget();
  // Print everything: open the folded details for the printout, and fold them back after.
  var openedForPrint = [];
  window.addEventListener('beforeprint', function () {
    openedForPrint = details.filter(function (d) { return !d.open; });
    openedForPrint.forEach(function (d) { d.open = true; });
    fit(document);
    resize();
  });
  window.addEventListener('afterprint', function () {
    openedForPrint.forEach(function (d) { d.open = false; });
    resize();
  });
  window.addEventListener('resize', resize);
})();

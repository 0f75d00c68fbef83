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

  function lines(series, dashed) {
    return series.map(function (s, i) {
      return {
        type: 'line', name: s.name, data: s.points, showSymbol: false, connectNulls: false,
        lineStyle: { width: dashed ? 1.5 : 2, type: dashed ? 'dashed' : 'solid', color: PALETTE[i % PALETTE.length] },
        itemStyle: { color: PALETTE[i % PALETTE.length] }
      };
    });
  }

  var build = {
    percentiles: function (level, tag) {
      var t = level.tags[tag];
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
    p99: function (level, tag) {
      var o = base('p99, ms', 'log', fmtMs);
      o.xAxis = timeAxis();
      o.series = lines(level.tags[tag].p99, false);
      return o;
    },
    cpu: function (level) {
      var o = base('%', 'value', fmtNum);
      o.xAxis = timeAxis();
      o.series = lines(level.lines.cpu, false).concat(lines(level.lines.client_cpu, true));
      return o;
    },
    rss: function (level) {
      var o = base('MB', 'value', fmtNum);
      o.xAxis = timeAxis();
      o.series = lines(level.lines.rss, false);
      return o;
    },
    threads: function (level) {
      var o = base('threads', 'value', fmtNum);
      o.xAxis = timeAxis();
      o.series = lines(level.lines.threads, false);
      return o;
    }
  };

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

  var charts = [];
  elements.forEach(function (el, n) {
    var what = 'chart ' + n + ' (' + el.dataset.kind + (el.dataset.tag ? ' ' + el.dataset.tag : '') + ')';
    try {
      var option = build[el.dataset.kind](data.levels[Number(el.dataset.level)], el.dataset.tag);
      // SVG keeps the drawing in the DOM, where a dump can check it, and prints sharply.
      var chart = echarts.init(el, null, { renderer: 'svg' });
      chart.setOption(option); // draws synchronously: animation is off
      charts.push(chart);
      body.dataset.chartsDrawn = String(Number(body.dataset.chartsDrawn) + 1);
    } catch (e) {
      report(what + ': ' + (e && e.stack ? e.stack : e));
    }
  });

  function resize() {
    charts.forEach(function (c) { c.resize(); });
  }
  window.addEventListener('resize', resize);
  window.addEventListener('beforeprint', resize);
  window.addEventListener('afterprint', resize);
})();

// 第 5 课的显存与通信计算器：按第 2、3 节的公式，算出每卡静态显存（分参数、梯度、优化器状态三项）、
// 每步每卡通信量，以及能否装进所选的卡。设置保存在地址的片段里（#zero-calc?psi=7.5e9&nd=64&stage=3&k=12&accum=0&card=24），
// 打开这样的链接就得到同样的设置。页面离线可用：不加载任何别处的文件。
(() => {
  'use strict';

  const ROOT_ID = 'zero-calc';
  const GIB = 2 ** 30;
  const CARDS = [24, 40, 80];
  // Llama-2-70B 的形状（第 5 课“具体演示”一节）：层数、隐藏维度、FFN 维度、注意力头数、KV 头数、词表。
  const LLAMA2_70B = { layers: 80, hidden: 8192, ffn: 28672, heads: 64, kvHeads: 8, vocab: 32000 };
  const DEFAULTS = { psi: 7e9, nd: 8, stage: 3, k: 12, accum: false, card: 80 };

  /** Parameters of a decoder of the given shape: attention (grouped K/V), SwiGLU MLP, two RMSNorms per layer,
   *  untied embedding and output layer, final norm. */
  function decoderParams(shape) {
    const kvWidth = shape.hidden * shape.kvHeads / shape.heads;
    const attention = 2 * shape.hidden * shape.hidden + 2 * shape.hidden * kvWidth;
    const mlp = 3 * shape.hidden * shape.ffn;
    const perLayer = attention + mlp + 2 * shape.hidden;
    return shape.layers * perLayer + 2 * shape.vocab * shape.hidden + shape.hidden;
  }

  const PRESETS = [
    { id: '7b', label: '7B（Ψ = 7×10⁹）', psi: 7e9 },
    { id: '70b', label: '70B（Ψ = 70×10⁹，正文的取整）', psi: 70e9 },
    { id: 'llama2-70b', label: 'Llama-2-70B 的形状', psi: decoderParams(LLAMA2_70B) },
  ];

  // 每卡静态显存，按第 2 节：BF16 参数 2 字节、BF16 梯度 2 字节、优化器状态 k 字节（每个参数），
  // ZeRO-1 起分片优化器状态，ZeRO-2 起分片梯度，ZeRO-3 起分片参数；FP32 梯度累积缓冲 4 字节/参数，与梯度同样分片。
  function staticMemory(s) {
    const share = (bytesPerParam, sharded) => (sharded ? bytesPerParam * s.psi / s.nd : bytesPerParam * s.psi);
    const gradsSharded = s.stage >= 2;
    return {
      params: share(2, s.stage >= 3),
      grads: share(2, gradsSharded) + (s.accum ? share(4, gradsSharded) : 0),
      optimizer: share(s.k, s.stage >= 1),
    };
  }

  // 每步每卡通信量（数值个数），按第 3 节的环形算法：一次 All-Gather 或 Reduce-Scatter 每卡收发 (N_d−1)/N_d·Ψ，
  // All-Reduce 是它的两倍。ZeRO-0 一次 All-Reduce，ZeRO-1/2 一次 Reduce-Scatter 加一次 All-Gather（都是 2 次），
  // ZeRO-3 前向、反向各一次 All-Gather 加一次 Reduce-Scatter（3 次）。
  function stepTraffic(s) {
    const passes = s.stage === 3 ? 3 : 2;
    return passes * (s.nd - 1) * s.psi / s.nd;
  }

  function readFragment(hash) {
    const match = /^#zero-calc\?(.*)$/.exec(hash);
    if (!match) {
      return null;
    }
    const q = new URLSearchParams(match[1]);
    const number = (key) => (q.has(key) ? Number(q.get(key)) : DEFAULTS[key]);
    return {
      psi: number('psi'),
      nd: number('nd'),
      stage: number('stage'),
      k: number('k'),
      accum: q.has('accum') ? q.get('accum') === '1' : DEFAULTS.accum,
      card: number('card'),
    };
  }

  function fragmentOf(s) {
    return `#zero-calc?psi=${s.psi}&nd=${s.nd}&stage=${s.stage}&k=${s.k}&accum=${s.accum ? 1 : 0}&card=${s.card}`;
  }

  /** What is wrong with a setting, in the reader's words, or '' when it can be computed. */
  function problem(s) {
    if (!(Number.isFinite(s.psi) && s.psi > 0)) {
      return '参数量 Ψ 要是正数（如 7e9）。';
    }
    if (!(Number.isInteger(s.nd) && s.nd >= 1)) {
      return '数据并行规模 N_d 要是不小于 1 的整数。';
    }
    if (![0, 1, 2, 3].includes(s.stage)) {
      return 'ZeRO 阶段只有 0、1、2、3。';
    }
    if (!(Number.isFinite(s.k) && s.k >= 0)) {
      return '优化器状态乘数 k 要是不小于 0 的数。';
    }
    if (!CARDS.includes(s.card)) {
      return `显卡只能选 ${CARDS.join('、')} GiB。`;
    }
    return '';
  }

  const gib = (bytes) => `${(bytes / GIB).toPrecision(4)} GiB`;
  const gb = (bytes) => `${(bytes / 1e9).toPrecision(4)} GB`;

  function element(tag, attrs = {}, text = '') {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      node.setAttribute(key, value);
    }
    if (text) {
      node.textContent = text;
    }
    return node;
  }

  function field(form, id, labelText, control) {
    const row = element('div', { class: 'zc-field' });
    row.append(element('label', { for: id }, labelText), control);
    form.append(row);
    return control;
  }

  function select(id, options) {
    const node = element('select', { id });
    for (const [value, label] of options) {
      node.append(element('option', { value: String(value) }, label));
    }
    return node;
  }

  function build(root) {
    root.textContent = '';
    const form = element('form', { class: 'zc-form', 'aria-describedby': 'zc-note' });
    form.addEventListener('submit', (event) => event.preventDefault());
    const presets = field(form, 'zc-preset', '模型', select('zc-preset',
      [['', '自定义 Ψ'], ...PRESETS.map((p) => [p.id, p.label])]));
    const psi = field(form, 'zc-psi', '参数量 Ψ',
      element('input', { id: 'zc-psi', type: 'number', min: '1', step: 'any', inputmode: 'decimal' }));
    const nd = field(form, 'zc-nd', '数据并行规模 N_d（卡数）',
      element('input', { id: 'zc-nd', type: 'number', min: '1', step: '1', inputmode: 'numeric' }));
    const stage = field(form, 'zc-stage', 'ZeRO 阶段', select('zc-stage', [
      [0, 'ZeRO-0（朴素 DP，不分片）'], [1, 'ZeRO-1（分片优化器状态）'],
      [2, 'ZeRO-2（再分片梯度）'], [3, 'ZeRO-3 / FSDP 全分片（再分片参数）']]));
    const k = field(form, 'zc-k', '优化器状态乘数 k（字节/参数，AdamW 混合精度为 12）',
      element('input', { id: 'zc-k', type: 'number', min: '0', step: 'any', inputmode: 'decimal' }));
    const accumRow = element('div', { class: 'zc-field zc-check' });
    const accum = element('input', { id: 'zc-accum', type: 'checkbox' });
    accumRow.append(accum, element('label', { for: 'zc-accum' }, 'FP32 梯度累积（每个参数再加 4 字节，与梯度同样分片）'));
    form.append(accumRow);
    const card = field(form, 'zc-card', '显卡显存', select('zc-card', CARDS.map((c) => [c, `${c} GiB`])));
    const note = element('p', { id: 'zc-note', class: 'zc-note' },
      '只算模型状态的静态显存（不含激活、ZeRO-3 临时拼出的整层参数、CUDA 上下文与通信缓冲区）；' +
      '通信量是每步每卡按环形算法收发的数值个数（每步一个 micro-batch），BF16 下每个数值 2 字节。');
    const results = element('div', { class: 'zc-results', 'aria-live': 'polite' });
    root.append(form, note, results);
    return { presets, psi, nd, stage, k, accum, card, results };
  }

  function settingOf(ui) {
    return {
      psi: ui.psi.value.trim() === '' ? NaN : Number(ui.psi.value),
      nd: ui.nd.value.trim() === '' ? NaN : Number(ui.nd.value),
      stage: Number(ui.stage.value),
      k: ui.k.value.trim() === '' ? NaN : Number(ui.k.value),
      accum: ui.accum.checked,
      card: Number(ui.card.value),
    };
  }

  function show(ui, s) {
    ui.psi.value = String(s.psi);
    ui.nd.value = String(s.nd);
    ui.stage.value = String(s.stage);
    ui.k.value = String(s.k);
    ui.accum.checked = s.accum;
    ui.card.value = String(s.card);
    matchPreset(ui, s.psi);
  }

  function matchPreset(ui, psi) {
    const preset = PRESETS.find((p) => p.psi === psi);
    ui.presets.value = preset ? preset.id : '';
  }

  function quantity(name, value, text) {
    return element('span', { 'data-quantity': name, 'data-value': String(value), class: 'zc-value' }, text);
  }

  function barRow(label, name, bytes, scale) {
    const row = element('div', { class: 'zc-row' });
    const bar = element('div', { class: `zc-bar zc-${name}`, 'aria-hidden': 'true' });
    const fill = element('span', { class: 'zc-fill' });
    fill.style.width = `${Math.min(100, 100 * bytes / scale)}%`;
    bar.append(fill);
    row.append(element('span', { class: 'zc-label' }, label), bar,
      quantity(`memory-${name}`, bytes, `${gib(bytes)}（${gb(bytes)}）`));
    return row;
  }

  function render(ui, s) {
    ui.results.textContent = '';
    const wrong = problem(s);
    if (wrong) {
      ui.results.append(element('p', { class: 'zc-problem' }, wrong));
      return;
    }
    const parts = staticMemory(s);
    const total = parts.params + parts.grads + parts.optimizer;
    const capacity = s.card * GIB;
    const scale = Math.max(total, capacity);
    const basis = total > capacity ? '合计显存' : ` ${s.card} GiB 的卡`;
    const heading = element('p', { class: 'zc-heading' }, `每卡静态显存（条长按${basis}计）：`);
    ui.results.append(heading,
      barRow('参数（BF16）', 'params', parts.params, scale),
      barRow(s.accum ? '梯度（BF16 + FP32 累积）' : '梯度（BF16）', 'grads', parts.grads, scale),
      barRow(`优化器状态（k = ${s.k}）`, 'optimizer', parts.optimizer, scale));
    const sum = element('p', { class: 'zc-total' }, '合计：');
    sum.append(quantity('memory', total, `${gib(total)}（${gb(total)}）`));
    const fits = total <= capacity;
    const verdict = element('p', { class: fits ? 'zc-fits' : 'zc-overflows', 'data-fits': fits ? '1' : '0' },
      fits ? `装得下：${s.card} GiB 的卡还剩 ${gib(capacity - total)}，要放激活、临时缓冲与运行时开销。`
        : `装不下：静态状态已超出 ${s.card} GiB 的卡 ${gib(total - capacity)}。`);
    const elements = stepTraffic(s);
    const traffic = element('p', { class: 'zc-traffic' }, '每步每卡通信：');
    traffic.append(quantity('traffic', elements, `${(elements / 1e9).toPrecision(4)}×10⁹ 个数值`),
      document.createTextNode(`（BF16 下约 ${gb(2 * elements)}；${s.stage === 3 ? '3' : '2'}(N_d−1)/N_d·Ψ）`));
    ui.results.append(sum, verdict, traffic);
  }

  function start() {
    const root = document.getElementById(ROOT_ID);
    if (!root) {
      return;
    }
    root.classList.add('zc-ready');
    const ui = build(root);
    const update = () => {
      const s = settingOf(ui);
      render(ui, s);
      if (!problem(s)) {
        history.replaceState(null, '', fragmentOf(s));
      }
    };
    const load = () => {
      const s = readFragment(window.location.hash);
      show(ui, s || DEFAULTS);
      render(ui, settingOf(ui));
      return s !== null;
    };
    ui.presets.addEventListener('change', () => {
      const preset = PRESETS.find((p) => p.id === ui.presets.value);
      if (preset) {
        ui.psi.value = String(preset.psi);
      }
      update();
    });
    ui.psi.addEventListener('input', () => {
      matchPreset(ui, Number(ui.psi.value));
      update();
    });
    for (const control of [ui.nd, ui.stage, ui.k, ui.accum, ui.card]) {
      control.addEventListener(control.tagName === 'SELECT' || control.type === 'checkbox' ? 'change' : 'input',
        update);
    }
    window.addEventListener('hashchange', load);
    if (load()) {
      root.scrollIntoView();
    }
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
})();

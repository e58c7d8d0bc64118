import { MATCH_TARGET_LUFS, MAX_TRUE_PEAK_DBTP } from './page.js';

/**
 * The share page's one script, served by this server at /share-assets/share-page.js (the page's policy allows
 * scripts from this server only, never inline ones). A click on a waveform seeks the player after it; on a
 * feedback link's page the comments become markers on the waveform (a click seeks and shows the comment), the
 * playhead moves over it, and the form comments at the playhead (or a range). A player's "Lossless" toggle
 * switches between the preview and the original at the same position. A/B sections (§20) switch between the
 * versions of a series at the same position, each version played through a Web Audio GainNode set from its
 * loudness to the target (HTMLMediaElement.volume does nothing on iOS), never boosted past the true-peak
 * ceiling. Every name and body goes into the page as text (textContent), never as markup.
 */
export const SHARE_PAGE_SCRIPT = `'use strict';
const MATCH_TARGET_LUFS = ${MATCH_TARGET_LUFS};
const MAX_TRUE_PEAK_DBTP = ${MAX_TRUE_PEAK_DBTP};
const clock = (ms) => {
  const total = Math.max(0, Math.round(ms / 100)) / 10;
  const minutes = Math.floor(total / 60);
  const seconds = (total - minutes * 60).toFixed(1).padStart(4, '0');
  return minutes + ':' + seconds;
};
const parseClock = (text) => {
  const match = /^\\s*(?:(\\d+):)?(\\d+(?:\\.\\d*)?)\\s*$/.exec(text);
  return match ? Math.round((Number(match[1] || 0) * 60 + Number(match[2])) * 1000) : null;
};
const el = (tag, className, text) => {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
};

/** Moves a player to another source at the same position, playing on if it played. */
const switchSource = (audio, src) => {
  const at = audio.currentTime;
  const playing = !audio.paused;
  audio.src = src;
  audio.addEventListener('loadedmetadata', () => {
    audio.currentTime = at;
    if (playing) void audio.play();
  }, { once: true });
};
for (const toggle of document.querySelectorAll('.lossless input')) {
  const audio = toggle.closest('.player').querySelector('audio');
  toggle.addEventListener('change', () => switchSource(audio, toggle.checked ? audio.dataset.original : audio.dataset.preview));
}

/**
 * The gain, in dB, that brings a version to the target loudness, lowered so its true peak stays at or below the
 * ceiling; 0 when its loudness is unknown (silence).
 */
const matchedGainDb = (audio) => {
  if (audio.dataset.lufs === undefined) return 0;
  const gain = MATCH_TARGET_LUFS - Number(audio.dataset.lufs);
  return audio.dataset.truePeak === undefined ? gain : Math.min(gain, MAX_TRUE_PEAK_DBTP - Number(audio.dataset.truePeak));
};
let context = null;
/** Routes a player through a gain of its own, made on a click (browsers start audio contexts on a gesture). */
const gained = (audio) => {
  if (audio.gainNode) return audio.gainNode;
  context ??= new AudioContext();
  const gain = context.createGain();
  gain.gain.value = 10 ** (matchedGainDb(audio) / 20);
  context.createMediaElementSource(audio).connect(gain).connect(context.destination);
  audio.gainNode = gain;
  audio.dataset.appliedGain = String(gain.gain.value);
  return gain;
};
for (const section of document.querySelectorAll('.ab')) {
  const choices = [...section.querySelectorAll('.ab-choice')];
  const playerOf = (choice) => document.getElementById(choice.dataset.target).querySelector('audio');
  const play = section.querySelector('.ab-play');
  let active = playerOf(choices[0]);
  const prepare = () => {
    for (const choice of choices) gained(playerOf(choice));
    void context.resume();
  };
  for (const choice of choices) {
    choice.addEventListener('click', () => {
      prepare();
      const next = playerOf(choice);
      for (const other of choices) other.setAttribute('aria-pressed', String(other === choice));
      if (next === active) return;
      const playing = !active.paused;
      next.currentTime = active.currentTime;
      active.pause();
      if (playing) void next.play();
      active = next;
    });
  }
  play.addEventListener('click', () => {
    prepare();
    if (active.paused) void active.play();
    else active.pause();
  });
  // Whichever player of the group starts, the others stop: one version is heard at a time.
  for (const choice of choices) {
    const audio = playerOf(choice);
    audio.addEventListener('play', () => {
      prepare();
      for (const other of choices) if (playerOf(other) !== audio) playerOf(other).pause();
      active = audio;
      for (const other of choices) other.setAttribute('aria-pressed', String(playerOf(other) === audio));
      play.textContent = 'Pause';
    });
    audio.addEventListener('pause', () => {
      if (audio === active) play.textContent = 'Play';
    });
  }
}

for (const wave of document.querySelectorAll('.wave')) {
  const audio = wave.parentElement.querySelector('audio');
  if (!audio) continue;
  const durationMs = () => (Number.isFinite(audio.duration) ? audio.duration * 1000 : Number(wave.dataset.durationMs) || 0);
  wave.addEventListener('click', (event) => {
    if (event.target.closest('.marker')) return;
    const box = wave.getBoundingClientRect();
    audio.currentTime = (Math.min(Math.max((event.clientX - box.left) / box.width, 0), 1) * durationMs()) / 1000;
  });
  const playhead = wave.querySelector('.playhead');
  if (playhead) {
    const move = () => {
      const total = durationMs();
      playhead.style.left = (total ? Math.min((audio.currentTime * 1000) / total, 1) * 100 : 0) + '%';
    };
    for (const type of ['timeupdate', 'seeked', 'loadedmetadata']) audio.addEventListener(type, move);
  }
}

const feedback = document.querySelector('.feedback');
if (feedback && document.querySelector('.player audio')) {
  const player = document.querySelector('.player');
  const audio = player.querySelector('audio');
  const wave = player.querySelector('.wave');
  const markers = wave.querySelector('.markers');
  const note = player.querySelector('.marker-note');
  const list = feedback.querySelector('.comments');
  const count = feedback.querySelector('.count');
  const durationMs = () => (Number.isFinite(audio.duration) ? audio.duration * 1000 : Number(wave.dataset.durationMs) || 0);

  const show = (item) => {
    for (const other of list.querySelectorAll('.comment.active')) other.classList.remove('active');
    for (const other of markers.querySelectorAll('.marker.active')) other.classList.remove('active');
    item.classList.add('active');
    const marker = markers.querySelector('[data-id="' + item.dataset.id + '"]');
    if (marker) marker.classList.add('active');
    note.replaceChildren(
      el('span', 'time', item.querySelector('.time').textContent),
      el('strong', 'author', item.querySelector('.author').textContent),
      el('span', 'body', item.querySelector('.body').textContent),
    );
    note.hidden = false;
    item.scrollIntoView({ block: 'nearest' });
  };
  const seekTo = (item) => {
    audio.currentTime = Number(item.dataset.atMs) / 1000;
    show(item);
  };
  const place = () => {
    const total = durationMs();
    markers.replaceChildren();
    if (!total) return;
    for (const item of list.querySelectorAll(':scope > .comment[data-at-ms]')) {
      const at = Number(item.dataset.atMs);
      const marker = el('button', item.dataset.endMs ? 'marker range' : 'marker');
      marker.type = 'button';
      marker.dataset.id = item.dataset.id;
      marker.title = item.querySelector('.author').textContent + ': ' + item.querySelector('.body').textContent;
      marker.setAttribute('aria-label', 'Comment at ' + clock(at) + ' by ' + item.querySelector('.author').textContent);
      marker.style.left = Math.min(at / total, 1) * 100 + '%';
      if (item.dataset.endMs) marker.style.width = Math.max(((Number(item.dataset.endMs) - at) / total) * 100, 0.5) + '%';
      marker.addEventListener('click', () => seekTo(item));
      markers.append(marker);
    }
  };
  for (const item of list.querySelectorAll('.comment[data-at-ms]')) item.querySelector('.time').addEventListener('click', () => seekTo(item));
  audio.addEventListener('loadedmetadata', place);
  place();

  const form = feedback.querySelector('form');
  // A link closed to new comments has no form: its comments are still shown.
  if (form) {
    const at = form.elements.at;
    const end = form.elements.end;
    const error = form.querySelector('.form-error');
    // The "at" field follows the playhead until someone types into it.
    let followPlayhead = true;
    at.addEventListener('input', () => (followPlayhead = false));
    const track = () => {
      if (followPlayhead) at.value = clock(audio.currentTime * 1000);
    };
    for (const type of ['timeupdate', 'seeked']) audio.addEventListener(type, track);
    form.querySelector('.end-here').addEventListener('click', () => (end.value = clock(audio.currentTime * 1000)));

    const render = (comment) => {
      const item = el('li', 'comment' + (comment.author.guest ? ' guest' : ''));
      item.dataset.id = comment.id;
      const head = el('div', 'head');
      if (comment.atMs !== null) {
        item.dataset.atMs = String(comment.atMs);
        if (comment.endMs !== null) item.dataset.endMs = String(comment.endMs);
        const time = el('button', 'time', clock(comment.atMs) + (comment.endMs === null ? '' : '–' + clock(comment.endMs)));
        time.type = 'button';
        time.addEventListener('click', () => seekTo(item));
        head.append(time);
      } else head.append(el('span', 'time whole', 'Whole mix'));
      head.append(el('span', 'author', comment.author.name));
      if (comment.author.guest) head.append(el('span', 'badge', 'guest'));
      item.append(head, el('p', 'body', comment.body));
      return item;
    };

    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      error.textContent = '';
      const payload = { name: form.elements.name.value, body: form.elements.body.value };
      if (at.value.trim() !== '') {
        payload.atMs = parseClock(at.value);
        if (payload.atMs === null) return void (error.textContent = 'Write the time as m:ss, such as 1:23.5');
      }
      if (end.value.trim() !== '') {
        payload.endMs = parseClock(end.value);
        if (payload.endMs === null) return void (error.textContent = 'Write the end as m:ss, such as 1:31');
      }
      const button = form.querySelector('button[type=submit]');
      button.disabled = true;
      try {
        const response = await fetch(feedback.dataset.commentsUrl, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
          body: JSON.stringify(payload),
        });
        const answer = await response.json();
        if (!response.ok) {
          const field = answer.errors && answer.errors[0];
          error.textContent = field ? field.field + ' ' + field.message : answer.detail || answer.title || 'Not sent';
          return;
        }
        const item = render(answer);
        const after = [...list.children].find((other) =>
          answer.atMs === null ? false : other.dataset.atMs === undefined || Number(other.dataset.atMs) > answer.atMs,
        );
        list.insertBefore(item, after || null);
        feedback.querySelector('.empty')?.remove();
        count.textContent = String(list.querySelectorAll(':scope > .comment').length);
        form.elements.body.value = '';
        end.value = '';
        followPlayhead = true;
        track();
        place();
        if (answer.atMs !== null) show(item);
      } catch {
        error.textContent = 'Not sent: the server could not be reached';
      } finally {
        button.disabled = false;
      }
    });
  }
}
`;

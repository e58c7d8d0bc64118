import { describe, expect, it } from 'vitest';
import { isCanonicalPath, normalisedPath, RouteTable } from '../../src/core/routing.js';

describe('path canonicalisation', () => {
  it('takes only the declared spelling: no //, %-escape, dot segment, trailing slash, ; or backslash', () => {
    for (const path of ['/', '/api/projects', '/api/projects/27f3a4df-b72d-409d-aa7c-86557034b570/vibes', '/uploads/files/a.mp3', '/API/PROJECTS']) {
      expect(isCanonicalPath(path), path).toBe(true);
    }
    for (const path of ['//api/projects', '/api//projects', '/api/projects/', '/api%2Fprojects', '/api/./projects', '/api/x/../projects', '/api/%2e/projects', '/api;x/projects', '/api/projects;', '/%61pi/projects', '/api\\projects', '', '*', 'http://host/api/projects']) {
      expect(isCanonicalPath(path), path).toBe(false);
    }
  });

  it('normalises a misspelt path for the log: decoded, dot segments resolved, empty segments and ; parameters dropped', () => {
    expect(normalisedPath('//api//share/./x/../tok;y/')).toBe('/api/share/tok');
    expect(normalisedPath('/%73hare%2Ftok')).toBe('/share/tok');
    expect(normalisedPath('/SHARE/%zz')).toBe('/SHARE/%zz');
  });

  it('matches routes exactly, letter case included, naming the template of each method', () => {
    const table = new RouteTable([
      { method: 'GET', path: '/api/projects/:id' },
      { method: 'PUT', path: '/api/projects/:id' },
      { method: 'GET', path: '/' },
    ]);
    expect([...table.routesAt('/api/projects/abc')]).toEqual([
      ['GET', '/api/projects/:id'],
      ['PUT', '/api/projects/:id'],
    ]);
    expect(table.routesAt('/API/projects/abc').size).toBe(0);
    expect(table.routesAt('/api/projects').size).toBe(0);
    expect([...table.routesAt('/')]).toEqual([['GET', '/']]);
  });
});

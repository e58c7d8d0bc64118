export { registerPull as register } from './session.js';

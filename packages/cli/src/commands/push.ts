export { registerPush as register } from './session.js';

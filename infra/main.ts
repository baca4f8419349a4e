/** `make run` and `npm start`: the documented path of the one-process service (infra/wiring/entry/main.ts). */
import './wiring/entry/main.js';

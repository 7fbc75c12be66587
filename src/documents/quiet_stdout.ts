/**
 * Imported first by the extraction process: its stdout carries frames only, so whatever a library
 * prints (pdf.js warnings and the like) goes to stderr instead.
 */
console.log = console.error;
console.info = console.error;
console.debug = console.error;
console.warn = console.error;

/**
 * Small media samples the fixture returns: made for it (a 1x1 red PNG and a
 * 1 ms silent 8 kHz mono WAV), base64-encoded as MCP content carries them.
 */

/** A 1x1 red pixel, PNG. */
export const redPixelPng =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"

/** Eight samples of silence, 8-bit PCM WAV at 8 kHz. */
export const silentWav = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=="

/**
 * Forecast the weather for a city.
 * @param city The city, e.g. "Lisbon".
 * @param days How many days to forecast.
 * @param unit Celsius (c) or Fahrenheit (f).
 * @sideEffects none
 * @example get_weather("Lisbon")
 * @example get_weather("Oslo", 3, 'f') => {high: 48.2, low: 39.1}
 * @example get_weather({city: `Kyoto`, days: 2})
 */
get_weather(city: string, days?: integer, unit?: 'c' | 'f'): { high: number; low: number }

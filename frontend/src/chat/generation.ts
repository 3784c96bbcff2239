/** Which chat the page shows, as a number that goes up on every switch (and when the page goes): an answer that
 * arrives for an earlier generation is dropped, so a slow request never writes into the next chat. */
export interface Generation {
  value: number;
}

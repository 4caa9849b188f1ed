/* demo.c - the bundled example: a small program with a hot function,
 * threads and a global, that prints its own ground truth. */
#include <pthread.h>
#include <stdio.h>

struct order {
	int id;
	double price;
	int quantity;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
long revenue_cents;

long process_order(const struct order *o)
{
	long cents = (long)(o->price * 100) * o->quantity;

	pthread_mutex_lock(&lock);
	revenue_cents += cents;
	pthread_mutex_unlock(&lock);
	return cents;
}

static void *worker(void *arg)
{
	int base = *(int *)arg;

	for (int i = 0; i < 3; i++) {
		struct order o = { base + i, 1.25 * (i + 1), base / 100 + i };
		process_order(&o);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	int base[2] = { 100, 200 };

	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, &base[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("demo: revenue_cents=%ld\n", revenue_cents);
	return 0;
}
